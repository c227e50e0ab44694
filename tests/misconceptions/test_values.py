"""Canonical answer text and reading free-text answers back."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edueval.misconceptions.values import decimal_str, format_value, parse_value


@pytest.mark.parametrize(
    ("value", "kind", "text"),
    [
        (372, "int", "372"),
        (-4, "int", "-4"),
        (Fraction(10, 12), "fraction", "5/6"),
        (Fraction(-14, 4), "fraction", "-7/2"),
        (Fraction(12, 4), "fraction", "3"),
        (Fraction(93, 20), "decimal", "4.65"),
        (Fraction(1, 8), "decimal", "0.125"),
        (Fraction(7, 1), "decimal", "7"),
        (Fraction(-1, 2), "decimal", "-0.5"),
        (Fraction(25, 2), "percent", "12.5%"),
        (60, "money", "$60"),
        (Fraction(288, 5), "money", "$57.60"),
        (Fraction(1, 20), "money", "$0.05"),
        (25, "pi", "25π"),
        (1, "pi", "π"),
        (Fraction(25, 4), "pi", "25π/4"),
    ],
)
def test_format_value(value, kind, text):
    assert format_value(value, kind) == text
    assert parse_value(text, kind) == Fraction(value)


def test_format_rejects_what_it_cannot_write_exactly():
    with pytest.raises(ValueError):
        format_value(Fraction(1, 3), "decimal")
    with pytest.raises(ValueError):
        format_value(Fraction(1, 2), "int")
    with pytest.raises(ValueError):
        format_value(Fraction(1, 1000), "money")
    with pytest.raises(ValueError, match="unknown answer kind"):
        format_value(1, "roman")


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("0.50", "decimal", Fraction(1, 2)),
        (" 2/4 ", "fraction", Fraction(1, 2)),
        ("$60.00", "money", Fraction(60)),
        ("1,234", "int", Fraction(1234)),
        ("25 pi", "pi", Fraction(25)),
        ("-π", "pi", Fraction(-1)),
        ("12.5 %", "percent", Fraction(25, 2)),
        ("4.", "int", Fraction(4)),
        ("−3", "int", Fraction(-3)),
    ],
)
def test_parse_is_lenient_about_spelling(text, kind, value):
    assert parse_value(text, kind) == value


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("25", "pi"),
        ("12.5", "percent"),
        ("abc", "int"),
        ("1/0", "fraction"),
        ("π2", "pi"),
        ("", "int"),
    ],
)
def test_parse_is_strict_about_meaning(text, kind):
    assert parse_value(text, kind) is None


terminating = st.builds(
    lambda n, a, b: Fraction(n, 2**a * 5**b),
    st.integers(-(10**6), 10**6),
    st.integers(0, 6),
    st.integers(0, 6),
)


@given(terminating, st.sampled_from(["fraction", "decimal", "percent", "pi"]))
def test_round_trip(x, kind):
    text = format_value(x, kind)
    assert parse_value(text, kind) == x
    if kind in ("decimal", "percent"):
        body = text.rstrip("%")
        assert "." not in body or not body.endswith("0")  # no trailing zeros, no float noise
        assert Fraction(body) == x  # exact: the text is the value


@given(terminating)
def test_decimal_str_matches_fraction_reading(x):
    assert Fraction(decimal_str(x)) == x
