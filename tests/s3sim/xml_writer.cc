#include "tests/s3sim/xml_writer.h"

namespace s3sim {

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "&#" + std::to_string(static_cast<int>(c)) + ";";
        } else {
          out += c;
        }
    }
  }
  return out;
}

XmlWriter::XmlWriter(std::string_view root) : root_(root) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<";
  out_.append(root).append(" xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
}

XmlWriter& XmlWriter::Open(std::string_view tag) {
  out_.append("<").append(tag).append(">");
  return *this;
}

XmlWriter& XmlWriter::Close(std::string_view tag) {
  out_.append("</").append(tag).append(">");
  return *this;
}

XmlWriter& XmlWriter::Elem(std::string_view tag, std::string_view text) {
  Open(tag);
  out_ += XmlEscape(text);
  return Close(tag);
}

XmlWriter& XmlWriter::Elem(std::string_view tag, long long value) {
  return Elem(tag, std::string_view(std::to_string(value)));
}

XmlWriter& XmlWriter::Elem(std::string_view tag, bool value) {
  return Elem(tag, std::string_view(value ? "true" : "false"));
}

std::string XmlWriter::Finish() {
  Close(root_);
  return std::move(out_);
}

}  // namespace s3sim
