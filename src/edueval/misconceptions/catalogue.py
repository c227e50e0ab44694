"""The catalogue of mal-rules: id, name, content area and what the flawed reasoning is.

Sources of the rules are the classic studies of systematic errors: subtraction and addition bugs
(Brown & Burton 1978; Brown & VanLehn 1980; VanLehn 1990), fraction and decimal misconceptions
(Resnick et al. 1989 "whole-number rule" and "fraction rule"; Steinle & Stacey's longer-is-larger
and shorter-is-larger), algebra mal-rules (Payne & Squibb 1990; Sleeman 1984) and common
measurement/data-analysis confusions. Texts are our own. Which problems each rule applies to, and
how, lives with the problem families (:mod:`.families`); the library joins the two and checks at
import that every rule here is implemented somewhere and every implementation is catalogued.
"""

from __future__ import annotations

__all__ = ["CATALOGUE"]

N, A, G, D = "Number & Operation", "Algebra", "Geometry & Measurement", "Data Analysis"

#: ``id -> (name, content, description)``
CATALOGUE: dict[str, tuple[str, str, str]] = {
    # --- whole-number operations -----------------------------------------------------------
    "forget_carry": (
        "Forget to carry",
        N,
        "Works column by column but never adds the carried digit into the next column: only the "
        "ones digit of each column result is written down.",
    ),
    "write_column_sum": (
        "Write each column sum in full",
        N,
        "Adds column by column and writes each column's whole sum under it, so a column adding "
        "to 12 puts 12 into the answer instead of writing 2 and carrying 1.",
    ),
    "left_align_addends": (
        "Line up numbers on the left",
        N,
        "Writes numbers of different lengths one under the other aligned on their first digits "
        "instead of their ones digits, so the shorter number is added at the wrong place value.",
    ),
    "carry_ones_digit": (
        "Carry the ones digit",
        N,
        "In a column whose digits add to 10 or more, writes the tens digit of the sum and "
        "carries the ones digit into the next column: the two digits swapped.",
    ),
    "quit_when_bottom_blank": (
        "Stop where the shorter number ends",
        N,
        "Works only the columns that have a digit in both numbers and drops the digits of the "
        "longer number that have nothing under them (VanLehn's quit-when-bottom-blank).",
    ),
    "smaller_from_larger": (
        "Subtract the smaller digit from the larger",
        N,
        "In every column subtracts the smaller digit from the larger one, whichever is on top, "
        "so it never regroups.",
    ),
    "borrow_no_decrement": (
        "Borrow without decrementing",
        N,
        "Regroups a ten into a column whose top digit is too small but does not take that ten "
        "away from the next column to the left.",
    ),
    "zero_instead_of_borrow": (
        "Write zero instead of regrouping",
        N,
        "When the top digit of a column is smaller than the bottom digit, writes 0 for that "
        "column instead of regrouping.",
    ),
    "borrow_from_leftmost": (
        "Borrow from the leftmost digit",
        N,
        "Regroups by taking the ten from the leftmost digit of the top number, whichever column "
        "needs it, rather than from the next column to the left (VanLehn's always-borrow-left).",
    ),
    "take_without_regrouping": (
        "Take from the next column without adding ten",
        N,
        "In a column whose top digit is too small, takes 1 from the next column but then "
        "subtracts the smaller digit from the larger instead of adding ten to the top digit.",
    ),
    "borrow_from_bottom": (
        "Borrow from the bottom number",
        N,
        "Regroups a ten into a column whose top digit is too small but takes the 1 from the "
        "bottom digit of the next column rather than from its top digit (VanLehn's "
        "borrow-from-bottom).",
    ),
    "place_value_shift": (
        "Place-value shift in multiplication",
        N,
        "In long multiplication writes the partial product for the tens digit without the "
        "placeholder zero, so it is added as ones instead of tens.",
    ),
    "multiply_matching_places": (
        "Multiply matching places only",
        N,
        "Multiplies tens by tens and ones by ones and adds the two products, leaving out the "
        "cross products (as if (30 + 4)(20 + 6) were 30 × 20 + 4 × 6).",
    ),
    "carry_before_multiply": (
        "Add the carry before multiplying",
        N,
        "In long multiplication adds the carried digit to the next digit of the top number and "
        "then multiplies, instead of multiplying first and adding the carry afterwards.",
    ),
    "two_placeholder_zeros": (
        "Shift the second row too far",
        N,
        "Writes the partial product for the tens digit with two placeholder zeros, as if the "
        "tens digit stood for hundreds.",
    ),
    "write_digit_products": (
        "Write each digit product in full",
        N,
        "Multiplies each digit of the top number by the bottom digit and writes every product "
        "whole, so a product of 24 puts 24 into the row instead of writing 4 and carrying 2.",
    ),
    # --- fractions ---------------------------------------------------------------------------
    "add_across": (
        "Add numerators and add denominators",
        N,
        "Adds two fractions by adding the numerators and adding the denominators, as if each "
        "were a separate whole-number sum.",
    ),
    "common_denominator_no_scale": (
        "Common denominator without renaming numerators",
        N,
        "Rewrites both fractions over a common denominator but keeps the original numerators "
        "instead of multiplying them by the same factor as their denominators.",
    ),
    "multiply_across": (
        "Multiply straight across",
        N,
        "Multiplies numerators together and denominators together whatever the operation: uses "
        "the multiplication rule to add fractions and forgets to invert the divisor when dividing.",
    ),
    "rename_numerators_only": (
        "Rename the numerators but not the denominator",
        N,
        "Multiplies each numerator by the factor that brings its fraction to the common "
        "denominator, then writes the sum over the larger of the original denominators.",
    ),
    "cross_multiply_add_denominators": (
        "Cross-multiply, then add the denominators",
        N,
        "Forms the numerator by cross-multiplying (a × d + c × b) but writes the sum of the two "
        "denominators underneath, mixing the cross-multiplication and add-across procedures.",
    ),
    "keep_first_denominator": (
        "Keep one denominator",
        N,
        "Adds the numerators and keeps the first fraction's denominator, as if the denominators "
        "were already alike.",
    ),
    "scale_by_own_denominator": (
        "Scale each numerator by its own denominator",
        N,
        "Cross-multiplies the wrong way round: multiplies each numerator by its own denominator "
        "(a × b + c × d) and writes that over the product of the denominators.",
    ),
    "invert_dividend": (
        "Invert the wrong fraction",
        N,
        "Divides fractions by inverting the first fraction (the dividend) instead of the divisor, "
        "then multiplying.",
    ),
    "invert_both": (
        "Invert both fractions",
        N,
        "Divides fractions by inverting both of them and then multiplying.",
    ),
    "divide_keep_common_denominator": (
        "Divide over a common denominator and keep it",
        N,
        "Rewrites both fractions over the common denominator b × d, divides the new numerators, "
        "and keeps the common denominator under the result, as in adding fractions.",
    ),
    "cross_multiply_only": (
        "Cross-multiply and stop",
        N,
        "Treats the division like a proportion: multiplies the first numerator by the second "
        "denominator and gives that product as the answer.",
    ),
    # --- decimals ----------------------------------------------------------------------------
    "longer_is_larger": (
        "Longer decimal is larger",
        N,
        "Compares decimals by reading the digits after the point as a whole number, so the "
        "decimal with more digits after the point looks larger (0.125 > 0.72 because 125 > 72).",
    ),
    "shorter_is_larger": (
        "Shorter decimal is larger",
        N,
        "Reasons that more decimal places mean smaller pieces (thousandths are smaller than "
        "tenths), so the decimal with the fewest digits after the point is taken as the largest.",
    ),
    "ignore_zero_after_point": (
        "Ignore zeros after the decimal point",
        N,
        "Treats a zero right after the decimal point as worth nothing and reads 0.08 as 0.8.",
    ),
    "right_align_decimals": (
        "Misaligned decimal points",
        N,
        "Adds decimals by lining up their last digits instead of their decimal points, then puts "
        "the point where it is in the number with more decimal places.",
    ),
    "decimal_parts_separately": (
        "Add whole and decimal parts separately",
        N,
        "Treats the digits before and after the decimal point as two separate whole numbers: "
        "adds the whole parts, and adds the decimal parts as whole numbers.",
    ),
    "decimal_places_as_multiplication": (
        "Place the point as in multiplication",
        N,
        "Ignores the decimal points, adds the digits as whole numbers, then counts off as many "
        "decimal places as the two numbers have together - the rule for multiplying decimals.",
    ),
    "ignore_decimal_point": (
        "Ignore the decimal points",
        N,
        "Drops the decimal points, lines the digits up on the right and adds the two whole "
        "numbers, giving the whole-number sum as the answer.",
    ),
    "point_from_fewer_places": (
        "Point as in the shorter decimal",
        N,
        "Lines the digits up on the right, adds them as whole numbers and puts the decimal point "
        "as many places from the right as the number with fewer decimal places has.",
    ),
    "forget_the_point": (
        "Forget to put the point back",
        N,
        "Writes both numbers with the same number of decimal places and adds them correctly as "
        "whole numbers, but never puts the decimal point back into the sum.",
    ),
    "annex_extra_zero": (
        "Annex too many zeros",
        N,
        "Pads the decimal with fewer places with one zero too many (3.4 as 3.400 beside 1.25), "
        "then lines up the last digits and places the point for two decimal places.",
    ),
    # --- percent -----------------------------------------------------------------------------
    "percent_change_new_base": (
        "Percent change relative to the new value",
        N,
        "Divides the change by the new value instead of the original value.",
    ),
    "percent_amount_confusion": (
        "Percent as an amount",
        N,
        "Confuses a percent with an absolute amount: reports a change in dollars as the percent "
        "change, or adds or subtracts a percent as if it were dollars.",
    ),
    "ratio_as_percent_change": (
        "Ratio as percent change",
        N,
        "Reports the new value as a percent of the original (new ÷ original × 100) as the percent "
        "change, without subtracting the original 100% - or, asked what percent one amount is of "
        "another, gives the percent by which it is larger or smaller.",
    ),
    "percent_of_wrong_base": (
        "Percent of the wrong base",
        N,
        "Applies the percent to the amount after the change instead of the original amount, e.g. "
        "undoes a 20% discount by adding 20% of the sale price.",
    ),
    "percent_part_only": (
        "Stop at the percent of the number",
        N,
        "Computes the given percent of the number in the problem and reports that part as the "
        "answer.",
    ),
    "forget_times_100": (
        "Forget to multiply by 100",
        N,
        "Divides the change by the original value and gives the quotient itself as the percent "
        "(0.25 read as 0.25%).",
    ),
    "divide_the_wrong_way": (
        "Divide the wrong way round",
        N,
        "Swaps divisor and dividend: divides the original value by the change (then multiplies "
        "by 100) for a percent change, the coefficient by the right-hand side for ax = c, or the "
        "base by the part for what percent one amount is of another.",
    ),
    "average_as_base": (
        "Percent of the average",
        N,
        "Divides the change by the average of the old and the new value (a 'percent "
        "difference') where the percent change divides by the old value.",
    ),
    "divide_by_the_change": (
        "Divide by the percent of the change",
        N,
        "Undoes a percent change by dividing the final amount by the percent of the change (0.2 "
        "for 20% off) rather than by the percent that remains (0.8).",
    ),
    "apply_the_change_again": (
        "Apply the change again",
        N,
        "Undoes a percent change by applying the same change to the final amount once more "
        "(another 20% off, another 25% on).",
    ),
    "undo_the_opposite_change": (
        "Undo the opposite change",
        N,
        "Undoes a percent change by dividing by the factor of the opposite change: by 1.2 to "
        "undo 20% off, by 0.75 to undo a 25% increase.",
    ),
    # --- order of operations -----------------------------------------------------------------
    "left_to_right": (
        "Left to right, ignoring precedence",
        A,
        "Carries out the operations in the order they are written, from left to right, instead "
        "of doing powers and multiplications first.",
    ),
    "add_before_multiply": (
        "Add before multiply",
        A,
        "Reverses the precedence of operations: does additions and subtractions before "
        "multiplications.",
    ),
    "add_before_subtract": (
        "Addition before subtraction",
        A,
        "Reads the order of operations as a fixed list in which every addition comes before any "
        "subtraction, so a − b + c is computed as a − (b + c).",
    ),
    "right_to_left": (
        "Right to left",
        A,
        "Carries out the operations from right to left, so the last operation written is done "
        "first.",
    ),
    # --- algebra -----------------------------------------------------------------------------
    "square_as_double": (
        "x² as 2x",
        A,
        "Treats the exponent as a factor: squares a number by multiplying it by 2.",
    ),
    "drop_exponent": (
        "Ignore the exponent",
        A,
        "Leaves out the exponent and uses x where x² is written (for example π × r for the area "
        "of a circle).",
    ),
    "concatenate_coefficient": (
        "Juxtapose coefficient and value",
        A,
        "Substitutes a value into a term like 3x by writing the digits side by side (3x at x = 5 "
        "read as 35) instead of multiplying.",
    ),
    "distribute_first_only": (
        "Distribute to the first term only",
        A,
        "Multiplies the factor in front of the parentheses by the first term inside only, so "
        "a(bx + c) becomes abx + c.",
    ),
    "move_term_no_sign_change": (
        "Move a term without changing its sign",
        A,
        "Moves a term to the other side of the equals sign but keeps its sign, so x + 6 = 21 "
        "becomes x = 21 + 6.",
    ),
    "inverse_ops_wrong_order": (
        "Divide before undoing the constant",
        A,
        "Solves ax + b = c by dividing only the right-hand side by a and then moving b, so the "
        "constant term is never divided.",
    ),
    "coefficient_as_addend": (
        "Coefficient as an addend",
        A,
        "Reads ax as a + x and so subtracts the coefficient instead of dividing by it.",
    ),
    "square_the_coefficient": (
        "Square the coefficient too",
        A,
        "Evaluates a term like 3x² as (3x)²: squares the coefficient together with the variable.",
    ),
    "multiply_instead_of_divide": (
        "Multiply by the coefficient",
        A,
        "Undoes the multiplication in ax = c by multiplying both sides by a rather than dividing.",
    ),
    "subtract_in_reverse_order": (
        "Subtract in reverse order",
        A,
        "Moves the constant across correctly but subtracts the wrong way round, b − c instead of "
        "c − b.",
    ),
    "drop_the_factor": (
        "Drop the factor in front",
        A,
        "Evaluates what is inside the parentheses and never multiplies by the factor written in "
        "front of them.",
    ),
    "multiply_all_numbers": (
        "Multiply all the numbers given",
        A,
        "Puts every number of the problem into one product (a 'use all the numbers' strategy): "
        "all three sides of a triangle, the four numbers of an expression, the factor, "
        "coefficient, value and constant of a(bx + c).",
    ),
    # --- geometry and measurement -------------------------------------------------------------
    "perimeter_area_confusion": (
        "Perimeter/area confusion",
        G,
        "Computes the boundary measure (perimeter, circumference, surface area) where the size "
        "measure (area, volume) is asked, or the size where the boundary is asked.",
    ),
    "add_sides_for_area": (
        "Add lengths for area or volume",
        G,
        "Adds the given lengths where the formula multiplies them.",
    ),
    "forget_half_triangle": (
        "Triangle area without the half",
        G,
        "Uses base × height as the area of a triangle, forgetting to take half.",
    ),
    "radius_diameter_swap": (
        "Radius/diameter swap",
        G,
        "Uses the diameter where the radius belongs, or halves a radius as if it were a diameter.",
    ),
    "base_area_for_volume": (
        "Base area for volume",
        G,
        "Multiplies only the length and the width - the area of the base - and leaves out the "
        "height.",
    ),
    "slant_side_as_height": (
        "Longest side as the height",
        G,
        "Takes the longest side of a right triangle (the hypotenuse) as the height and multiplies "
        "it by the other leg and one half.",
    ),
    "halve_every_length": (
        "Halve both lengths",
        G,
        "Applies the half in the triangle formula to each length: halves the base and the height "
        "and multiplies the halves.",
    ),
    "mix_circle_formulas": (
        "Mix the circle formulas",
        G,
        "Blends the circumference and area formulas into 2 × π × r × r.",
    ),
    "square_the_diameter": (
        "Square the diameter",
        G,
        "Computes π × d × d with the diameter d, as if the area formula took the diameter.",
    ),
    "cube_the_radius": (
        "Cube the radius",
        G,
        "Uses r × r × r, the power of a volume formula, for the area of a circle.",
    ),
    "treat_as_cube": (
        "Treat the box as a cube",
        G,
        "Takes the longest edge for all three dimensions and cubes it.",
    ),
    "add_face_areas": (
        "Add the face areas for volume",
        G,
        "Adds the areas of three different faces of the box (length × width, length × height, "
        "width × height) where the volume multiplies the three edges.",
    ),
    # --- data analysis -----------------------------------------------------------------------
    "no_sorting": (
        "Forget to sort the data",
        D,
        "Works with the values in the order they are listed: takes the middle listed value as "
        "the median and the difference of the first and last listed values as the range.",
    ),
    "mean_median_confusion": (
        "Mean/median confusion",
        D,
        "Swaps the two averages: computes the mean when the median is asked and picks the middle "
        "value when the mean is asked.",
    ),
    "midrange_as_center": (
        "Midrange as the average",
        D,
        "Takes the number halfway between the smallest and the largest value as the mean or the "
        "median.",
    ),
    "sum_without_dividing": (
        "Sum without dividing",
        D,
        "Adds up the values for the mean but does not divide by how many values there are.",
    ),
    "range_as_largest": (
        "Range as the largest value",
        D,
        "Gives the largest value in the data as its range.",
    ),
    "fencepost_range": (
        "Count the range inclusively",
        D,
        "Counts the whole numbers from the smallest to the largest value inclusively, getting "
        "one more than their difference.",
    ),
    "median_position_as_value": (
        "Position of the median as its value",
        D,
        "Finds where the middle value sits, (n + 1) ÷ 2, and gives that position as the median.",
    ),
    "divide_by_one_less": (
        "Divide by one less than the count",
        D,
        "Adds up the values for the mean but divides by one less than the number of values.",
    ),
    "count_as_range": (
        "Count of values as the range",
        D,
        "Gives the number of values in the data set as its range.",
    ),
    "add_the_extremes": (
        "Add the largest and smallest values",
        D,
        "Adds the largest and the smallest value where the range subtracts them.",
    ),
    "range_between_exclusive": (
        "Count the whole numbers strictly between",
        D,
        "Counts the whole numbers strictly between the smallest and the largest value, getting "
        "one less than their difference.",
    ),
    # --- used only by question variants (:mod:`.variants`); last, so that the order of the
    # rules above is unchanged -----------------------------------------------------------------
    "ignore_parentheses": (
        "Ignore the parentheses",
        A,
        "Evaluates an expression as if its parentheses were not there, so (a + b) × c is "
        "computed as a + b × c.",
    ),
    "cone_cylinder_confusion": (
        "Cone/cylinder volume confusion",
        G,
        "Mixes up the volume formulas of cones (pyramids) and cylinders (prisms): leaves out the "
        "1/3 of a cone's volume, or divides a cylinder's by 3.",
    ),
}
