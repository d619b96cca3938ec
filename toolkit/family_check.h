// `leaky check` for an op of leaky/family.h besides LeakyReLU: the first
// output diagnosed by place as LeakyReLU's (what never was written, what
// landed elsewhere, NaNs, zero signs), the other outputs (dweight, db,
// noise, the mask) compared bit for bit, and then the op's own faults
// (family_models.h) tried against every output: one that explains every
// wrong element is the finding. Pure: no I/O.
#ifndef LEAKY_TOOLKIT_FAMILY_CHECK_H_
#define LEAKY_TOOLKIT_FAMILY_CHECK_H_

#include <optional>

#include "diagnose.h"
#include "family_golden.h"
#include "layout.h"

namespace leaky::toolkit {

// results: the kernel's outputs in the row's order (at least the first,
// which must have the golden's size; throws GoldenError otherwise). The
// tolerance is max_ulp, or ELU's bound where that is larger.
CheckResult CheckFamily(const FamilyProblem& p, const Operands& results, uint64_t max_ulp,
                        bool strict_zero_sign, const std::optional<Layout>& plan);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FAMILY_CHECK_H_
