// Minimal XML output for S3 response bodies: escaping plus an element
// builder. (Request XML is parsed with pugixml in the handlers.)
#ifndef TESTS_S3SIM_XML_WRITER_H_
#define TESTS_S3SIM_XML_WRITER_H_

#include <string>
#include <string_view>

namespace s3sim {

std::string XmlEscape(std::string_view s);

class XmlWriter {
 public:
  // Starts the document with the XML declaration and the root element in the
  // S3 namespace.
  explicit XmlWriter(std::string_view root);
  XmlWriter& Open(std::string_view tag);
  XmlWriter& Close(std::string_view tag);
  XmlWriter& Elem(std::string_view tag, std::string_view text);
  XmlWriter& Elem(std::string_view tag, const char* text) {
    return Elem(tag, std::string_view(text));
  }
  XmlWriter& Elem(std::string_view tag, long long value);
  XmlWriter& Elem(std::string_view tag, bool value);
  // Closes the root and returns the document.
  std::string Finish();

 private:
  std::string root_;
  std::string out_;
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_XML_WRITER_H_
