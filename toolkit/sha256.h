// SHA-256 in lower-case hex (OpenSSL's libcrypto): the charting scripts'
// pinned digests (vega.cc) and the GAN lab's binary hash (provenance).
#ifndef LEAKY_TOOLKIT_SHA256_H_
#define LEAKY_TOOLKIT_SHA256_H_

#include <string>

namespace leaky::toolkit {

// `bytes`' digest; empty if OpenSSL fails, which no real digest equals.
std::string Sha256Hex(const std::string& bytes);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_SHA256_H_
