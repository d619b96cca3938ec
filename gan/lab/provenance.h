// Where and from what a study ran (results.json's "provenance", lab
// version 4): the source's commit at build time and whether the tree was
// clean, the library's version, the binary's SHA-256, the command line, the
// machine, and start and end times (UTC), so runs resumed or repeated on
// another machine or binary can be told apart.
#ifndef LEAKY_GAN_PROVENANCE_H_
#define LEAKY_GAN_PROVENANCE_H_

#include <string>

#include "records.h"

namespace leaky::gan {

// This process's provenance, started now (`finished` empty).
Provenance CurrentProvenance();

// The time now as "2026-12-06T04:05:06Z".
std::string UtcNow();

}  // namespace leaky::gan

#endif  // LEAKY_GAN_PROVENANCE_H_
