// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum S3
// verifies as x-amz-checksum-crc32c. s3sim's own version (SSE4.2 or tables), written
// from the definition rather than linked from s3/: s3sim stays independent of
// the client so that a wrong checksum cannot hide in both (see CMakeLists.txt).
#ifndef TESTS_S3SIM_CRC32C_H_
#define TESTS_S3SIM_CRC32C_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace s3sim {

uint32_t Crc32c(std::string_view data);
// Base64 of the 4 big-endian bytes of Crc32c(data): the header's form.
std::string Crc32cBase64(std::string_view data);

}  // namespace s3sim

#endif  // TESTS_S3SIM_CRC32C_H_
