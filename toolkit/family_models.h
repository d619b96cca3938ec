// Why a kernel of a family op (leaky/family.h besides LeakyReLU) computes
// wrong values: the faults each op invites, each a model of the output a
// kernel with that fault gives, tried against what the kernel gave.
//
// A model is the op computed another way from the same inputs (PReLU's
// weights indexed along another axis, ELU's exp(x) - 1, RReLU's stream
// restarted per core, bias_act's clamp before its gain, ...), each with the
// variants a port writes (another stride, a restart per core or per tile, a
// clamp on one side). A model explains the kernel when every element the
// kernel got wrong, in every output, is what the model gives there; where
// several kinds explain it equally well the finding is `ambiguous`, and
// where none does nothing is claimed (the check's `mismatch` stands). Sums
// (PReLU's dweight, bias_act's db) are compared within the rounding their
// order of summation allows, and ELU's exp within a few ulp of exp's own
// result; everything else bit for bit. Pure: no I/O.
#ifndef LEAKY_TOOLKIT_FAMILY_MODELS_H_
#define LEAKY_TOOLKIT_FAMILY_MODELS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose.h"
#include "family_golden.h"
#include "layout.h"

namespace leaky::toolkit {

// The family's value findings (kinds of the FamilyValues detector,
// finding_kinds.inc; details: output, index, counts, and for ambiguous the
// candidates) for `results` (the kernel's outputs, in the
// row's order; fewer than the row's: the rest taken as right). Empty: none
// of the models explains the output, or the problem is not modelled (bf16;
// a model that without its fault is not the library's golden).
std::vector<Finding> ExplainFamily(const FamilyProblem& p, const Operands& results,
                                   const Layout* plan, uint64_t max_ulp);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FAMILY_MODELS_H_
