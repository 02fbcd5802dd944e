"""Derivative callbacks a model forgot: the library's default would have guessed (identity reset,
no p in f or u0, ∂f/∂t = 0) and returned a wrong gradient with exit 0; each is refused with an
error naming the callback (and the event or parameter). tests/callback_contract.cpp is the model;
'complete' and 'f_without_p' are the controls (a default that is right must still be accepted)."""
import re

from case import Case

DRIVER = "../tests/callback_contract"
FWD = ["-hs_forward"]
ADJ = ["-hs_adjoint"]


def gradient_matches(sweeps):
    """check: every printed forward/adjoint dJ/dp equals the exact value to 1e-9 (the model is
    piecewise linear in t: RK4 is exact up to round-off and the event location tolerance)."""
    def check(r):
        exact = dict(re.findall(r"exact dJ/d(\w+) = (\S+)", r.stdout))
        if len(exact) != 3:
            return "no exact values printed"
        m = re.search(r"x\(T\) = (\S+)", r.stdout)
        if not m or abs(float(m.group(1)) - 0.8) > 1e-9:
            return f"x(T) wrong: {m.group(1) if m else 'missing'} (exact 0.8)"
        for sweep in sweeps:
            got = dict(re.findall(sweep + r" dJ/d(\w+) = (\S+)", r.stdout))
            if set(got) != set(exact):
                return f"{sweep} gradient missing"
            for k, v in exact.items():
                if abs(float(got[k]) - float(v)) > 1e-9:
                    return f"{sweep} dJ/d{k} = {got[k]}, exact {v}"
        return None
    return check


def refused(callback, *also):
    """The error names the callback and every further string (event, parameter)."""
    return re.escape(callback) + "".join(r"[\s\S]*" + re.escape(a) for a in also)


CASES = [
    # controls
    Case("complete_forward_adjoint", DRIVER, ["-model", "complete"] + FWD + ADJ, check=gradient_matches(["forward", "adjoint"])),
    Case("complete_forward_adjoint_np2", DRIVER, ["-model", "complete"] + FWD + ADJ, np=2,
         check=gradient_matches(["forward", "adjoint"])),
    Case("f_without_p_default_rhs_jacobian_p", DRIVER, ["-model", "f_without_p"] + FWD + ADJ,
         check=gradient_matches(["forward", "adjoint"])),
    # f depends on a, rhsJacobianP not overridden: was dJ/da = 0 (exact 1.5)
    Case("forgot_rhs_jacobian_p_forward", DRIVER, ["-model", "no_rhs_jacobian_p"] + FWD,
         error=refused("depends on the parameters", "parameter 'a'", "rhsJacobianP")),
    Case("forgot_rhs_jacobian_p_adjoint", DRIVER, ["-model", "no_rhs_jacobian_p"] + ADJ,
         error=refused("depends on the parameters", "parameter 'a'", "rhsJacobianP")),
    Case("forgot_rhs_jacobian_p_adjoint_np2", DRIVER, ["-model", "no_rhs_jacobian_p"] + ADJ, np=2,
         error=refused("depends on the parameters", "parameter 'a'", "rhsJacobianP")),
    # u0 = x0, initialStateJacobianP not overridden: was dJ/dx0 = 0 (exact 1.1)
    Case("forgot_initial_state_jacobian_p_forward", DRIVER, ["-model", "no_initial_state_jacobian_p"] + FWD,
         error=refused("initial state", "parameter 'x0'", "initialStateJacobianP")),
    Case("forgot_initial_state_jacobian_p_adjoint", DRIVER, ["-model", "no_initial_state_jacobian_p"] + ADJ,
         error=refused("initial state", "parameter 'x0'", "initialStateJacobianP")),
    # reset() without hasReset(): the reset was ignored (x(T) = 1.4, exact 0.8), even without sensitivities
    Case("forgot_has_reset", DRIVER, ["-model", "no_has_reset"],
         error=refused("implements reset() but not hasReset()", "'ceiling'")),
    Case("forgot_has_reset_np2", DRIVER, ["-model", "no_has_reset"], np=2,
         error=refused("implements reset() but not hasReset()", "'ceiling'")),
    # hasReset() true, reset() not overridden: was the identity
    Case("forgot_reset", DRIVER, ["-model", "no_reset"], error=refused("hasReset() is true for event 'ceiling'", "reset()")),
    # one reset derivative missing: was the identity / zero
    Case("forgot_reset_jacobian_action", DRIVER, ["-model", "no_reset_jacobian_action"] + FWD,
         error=refused("event 'ceiling'", "resetJacobianAction()")),
    Case("forgot_reset_jacobian_transpose_action", DRIVER, ["-model", "no_reset_jacobian_transpose_action"] + ADJ,
         error=refused("event 'ceiling'", "resetJacobianTransposeAction()")),
    Case("forgot_reset_jacobian_p_forward", DRIVER, ["-model", "no_reset_jacobian_p"] + FWD,
         error=refused("event 'ceiling'", "resetJacobianP()")),
    Case("forgot_reset_jacobian_p_adjoint", DRIVER, ["-model", "no_reset_jacobian_p"] + ADJ,
         error=refused("event 'ceiling'", "resetJacobianP()")),
    Case("forgot_reset_time_derivative", DRIVER, ["-model", "no_reset_time_derivative"] + ADJ,
         error=refused("event 'ceiling'", "resetTimeDerivative()")),
    # a derivative not needed by the sweep that runs is not asked for
    Case("forward_does_not_need_reset_transpose", DRIVER, ["-model", "no_reset_jacobian_transpose_action"] + FWD,
         check=gradient_matches(["forward"])),
    # explicitTime() true without rhsTimeDerivative(): was ∂f/∂t = 0
    Case("forgot_rhs_time_derivative", DRIVER, ["-model", "no_rhs_time_derivative"] + FWD,
         error=refused("explicitTime() is true", "rhsTimeDerivative()")),
    # numTimeEvents() > 0 without timeEvent(): the event was placed at t = 0 and never fired
    Case("forgot_time_event", DRIVER, ["-model", "no_time_event"], error=refused("does not override timeEvent()")),
]
