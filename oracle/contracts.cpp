// The named contracts: oracle/contracts.h.
#include "oracle/contracts.h"

#include <cmath>
#include <optional>

#include "core/error.h"

namespace convcheck {

namespace {

// The contract named `name` for results of dtype t; nullopt for an unknown name. `bitwise` is set
// for "exact".
std::optional<NumericContract> named_contract(const std::string& name, DType t, bool& bitwise) {
  bitwise = false;
  NumericContract k;
  k.name = name;
  k.chain = NumericContract::Chain::linear;
  k.deterministic = true;
  if (name == "exact") {
    bitwise = true;
    k.chain = NumericContract::Chain::exact;
    return k;
  }
  if (name == "i32") {
    k.name = "i32-wrap";
    k.chain = NumericContract::Chain::exact;
    return k;
  }
  int acc_bits = 0, in_bits = 0;  // precision of the accumulation and of the operands' conversion
  if (name == "f32") {
    acc_bits = in_bits = 24;
  } else if (name == "tf32") {
    acc_bits = 24;
    in_bits = 11;
  } else if (name == "f16") {
    acc_bits = in_bits = 11;
  } else if (name == "bf16") {
    acc_bits = in_bits = 8;
  } else if (name == "f64") {
    acc_bits = in_bits = 53;
  } else {
    return std::nullopt;
  }
  if (t == DType::i32) return k;  // refused by the caller
  const int p = float_format(t).precision;
  k.u_acc = std::ldexp(1.0, -acc_bits);
  k.u_in = p > in_bits ? std::ldexp(1.0, -in_bits) : 0.0;
  k.u_out = p < acc_bits ? std::ldexp(1.0, -p) : 0.0;
  return k;
}

}  // namespace

std::vector<NamedContract> parse_contracts(const std::string& given, const Problem& p) {
  const std::string names = !given.empty()          ? given
                            : p.dtype == DType::f64 ? "f64"
                            : p.dtype == DType::i32 ? "i32"
                                                    : "f32";
  std::vector<NamedContract> contracts;
  for (std::size_t start = 0; start <= names.size();) {
    const std::size_t comma = names.find(',', start);
    NamedContract c;
    c.name = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::optional<NumericContract> k = named_contract(c.name, p.dtype, c.bitwise);
    if (!k)
      throw InvalidArgument("--contract " + c.name +
                            ": expected f32, tf32, f16, bf16, f64, exact or i32 (comma-separated)");
    if ((p.dtype == DType::i32) != (c.name == "i32") && c.name != "exact")
      throw InvalidArgument(
          "--contract " + c.name + " does not apply to " + dtype_name(p.dtype) +
          " results: " + (p.dtype == DType::i32 ? "use i32 or exact" : "i32 is for int32 only"));
    c.contract = *k;
    contracts.push_back(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return contracts;
}

}  // namespace convcheck
