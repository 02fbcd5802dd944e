// Adapters for hand-coded second-derivative products in the tests: the test models write
// every product as (v, vp) → (hu, hp) with all blocks present; these classes map the
// SecondOrderModel / SecondOrderCost conventions (hybridsens/second_order.hpp: optional blocks)
// onto that and insist that the Hessian driver passes the full direction with δt = 0 and
// zeroed outputs — which is what the driver promises (hybridsens/hessian.hpp).
#pragma once

#include <hybridsens/second_order.hpp>

namespace hstest {

using namespace hybridsens;

inline PetscErrorCode checkFullDirection(const SecondOrderDirection &dir, const SecondOrderOutput &out, const ModeContext &c) {
  PetscFunctionBeginUser;
  PetscCheck(dir.dt == 0 && dir.du && out.u && (c.p.empty() || (dir.dp && out.p)), PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "test products: the Hessian driver must pass (0, v, vp) and ask for (hu, hp)");
  PetscFunctionReturn(0);
}

class ModelProducts : public SecondOrderModel {
public:
  // hu = (w·f)_uu v + (w·f)_up vp, hp = (w·f)_pu v + (w·f)_pp vp; hu, hp are zero on entry.
  virtual PetscErrorCode product(PetscReal t, Vec u, const ModeContext &c, Vec w, Vec v, const PetscScalar *vp, Vec hu,
                                 PetscScalar *hp) const = 0;
  PetscErrorCode rhsHessianProduct(PetscReal t, Vec u, const ModeContext &c, Vec w, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const override {
    PetscFunctionBeginUser;
    PetscCall(checkFullDirection(dir, out, c));
    PetscCall(product(t, u, c, w, dir.du, dir.dp, out.u, out.p));
    PetscFunctionReturn(0);
  }
};

class CostProducts : public SecondOrderCost {
public:
  virtual PetscErrorCode terminalProduct(PetscReal, Vec, const ModeContext &, Vec, const PetscScalar *, Vec, PetscScalar *) const {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "no terminal product");
  }
  virtual PetscErrorCode integrandProduct(PetscReal, Vec, const ModeContext &, Vec, const PetscScalar *, Vec, PetscScalar *) const {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "no integrand product");
  }
  virtual PetscErrorCode measurementProduct(PetscInt, PetscReal, Vec, const ModeContext &, Vec, const PetscScalar *, Vec,
                                            PetscScalar *) const {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "no measurement product");
  }
  PetscErrorCode terminalHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                        const SecondOrderOutput &out) const override {
    PetscFunctionBeginUser;
    PetscCall(checkFullDirection(dir, out, c));
    PetscCall(terminalProduct(t, u, c, dir.du, dir.dp, out.u, out.p));
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                         const SecondOrderOutput &out) const override {
    PetscFunctionBeginUser;
    PetscCall(checkFullDirection(dir, out, c));
    PetscCall(integrandProduct(t, u, c, dir.du, dir.dp, out.u, out.p));
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementHessianProduct(PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const override {
    PetscFunctionBeginUser;
    PetscCall(checkFullDirection(dir, out, c));
    PetscCall(measurementProduct(i, t, u, c, dir.du, dir.dp, out.u, out.p));
    PetscFunctionReturn(0);
  }
};

} // namespace hstest
