import math


class Calc:
    def add(self, a, b):
        return a + b

    def div(self, a, b):
        return a / b


def helper(x):
    y = x * 2
    return y
