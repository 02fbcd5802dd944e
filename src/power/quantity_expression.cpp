#include <hybridsens/power/quantity_expression.hpp>

#include <cctype>
#include <cstdlib>

namespace hybridsens {
namespace power {

PetscErrorCode parseQuantityExpression(const std::string &text, const char *who, const char *option, const std::string &names,
                                       const QuantityResolver &resolve, PetscReal omegaS, QuantityExpression *out) {
  const MPI_Comm world = PETSC_COMM_WORLD;
  PetscFunctionBeginUser;
  QuantityExpression e;
  e.text = text;
  e.omegaS = omegaS;
  PetscCheck(!text.empty(), world, PETSC_ERR_ARG_WRONG, "%s: %s: an empty expression", who, option);
  size_t i = 0;
  while (i < text.size()) {
    PetscReal coef = 1;
    if (text[i] == '+' || text[i] == '-') coef = text[i++] == '-' ? -1 : 1;
    else PetscCheck(i == 0, world, PETSC_ERR_ARG_WRONG, "%s: %s '%s': expected + or - at position %zu", who, option, text.c_str(), i + 1);
    bool haveNumber = false;
    if (i < text.size() && (std::isdigit((unsigned char)text[i]) || text[i] == '.')) {
      char *end;
      const double c = std::strtod(text.c_str() + i, &end);
      PetscCheck(end != text.c_str() + i && std::isfinite(c), world, PETSC_ERR_ARG_WRONG, "%s: %s '%s': bad number at position %zu", who, option,
                 text.c_str(), i + 1);
      i = (size_t)(end - text.c_str());
      coef *= c, haveNumber = true;
      if (i < text.size() && text[i] == '*') ++i;
      else {
        e.constant += coef;
        continue;
      }
    }
    size_t j = i;
    while (j < text.size() && std::isalpha((unsigned char)text[j])) ++j;
    size_t k = j;
    while (k < text.size() && (std::isdigit((unsigned char)text[k]) || text[k] == '_')) ++k;
    const std::string base = text.substr(i, j - i), label = text.substr(j, k - j);
    PetscCheck(!base.empty() && !label.empty(), world, PETSC_ERR_ARG_WRONG, "%s: %s '%s': expected a quantity%s at position %zu (%s)", who, option,
               text.c_str(), haveNumber ? " after '*'" : "", i + 1, names.c_str());
    QuantityExpression::Term term{coef, QuantityExpression::Plain, 0, 0};
    PetscCall(resolve(base, label, e, term));
    e.terms.push_back(term);
    i = k;
  }
  PetscCheck(!e.terms.empty(), world, PETSC_ERR_ARG_WRONG, "%s: %s '%s' names no quantity (%s)", who, option, text.c_str(), names.c_str());
  *out = std::move(e);
  PetscFunctionReturn(0);
}

} // namespace power
} // namespace hybridsens
