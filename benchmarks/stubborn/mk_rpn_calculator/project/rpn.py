"""A reverse-Polish calculator."""


def apply(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    raise ValueError(f"unknown operator {op}")


def rpn(expr):
    stack = []
    for tok in expr.split():
        if tok in ("+", "-", "*"):
            b = stack.pop()
            a = stack.pop()
            stack.append(apply(tok, b, a))
        else:
            stack.append(int(tok))
    if len(stack) != 0:
        raise ValueError("malformed expression")
    return stack[0]
