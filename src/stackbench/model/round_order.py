"""Which arm goes first in each round of a paired experiment (`stackbench ab`, and `tune`'s knob rounds).

Why not A first every round: the arm measured second in a round can be faster or slower for reasons that
have nothing to do with it (bench/RESULTS.md: arm B, always second, was ahead by +3.3 % in 14 of 20 A/A
sessions). With A always first that position effect is added to every round's B/A ratio and a null change
gets kept; a simulated +3 % position effect gave 4-14 % false keeps under a fixed order and 0-2 % with the
order counterbalanced (tests/analysis/test_order_effect.py).

The order is mirrored: AB, BA, AB, BA, ... so that the measurements run A B | B A | A B | B A. Two things
can bias a round's B/A ratio, and this is the one sequence that removes both:

- position (the second measurement of a round is favoured): cancels over any even number of rounds, since
  A goes first in half of them;
- first-order carry-over (what the previous measurement leaves behind, a warmed cache, dirty data still
  being written back, a rewritten file layout): every round starts with the arm that ended the round before,
  so both measurements of a round follow the same arm and its carry-over hits both alike. That holds in
  every round after the first whatever the number of rounds, and it forces the sequence: once round 1 is
  AB, round 2 must start with B. The ABBA-by-rounds order (AB, BA, BA, AB) balances position too but not
  carry-over: B follows A in 3 of every 4 of its measurements and A follows B in 3 of 4, so a +1 % carry-over
  from B moves the mean B/A ratio by -0.5 % however many rounds are run.

An odd number of rounds cannot balance position (one order has one round more); `even_rounds` says how many
to run instead, and `ab` runs that many. The first measurement of a session follows no measurement at all,
an asymmetry no order removes; it weighs 1/rounds.
"""

from __future__ import annotations

AB, BA = "AB", "BA"


def round_orders(rounds: int) -> list[str]:
    """The order of each round, `"AB"` or `"BA"`: AB, BA, AB, BA, ... (see the module's docstring).

    Any prefix of the sequence is itself as balanced as its length allows, so a session stopped early, or
    looked at after some rounds (tune's sequential looks), keeps the property.
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    return [AB if index % 2 == 0 else BA for index in range(rounds)]


def even_rounds(rounds: int) -> int:
    """The number of rounds to run when `rounds` are asked for: an odd count is raised by one, so that each
    arm goes first in as many rounds as the other."""
    return rounds + rounds % 2


def second_arm_sign(order: str) -> int:
    """+1 when B was measured second in the round (AB), -1 when A was (BA): the sign that turns a round's
    log(B/A) into log(second/first)."""
    if order == AB:
        return 1
    if order == BA:
        return -1
    raise ValueError(f"a round's order is 'AB' or 'BA', not {order!r}")


def arm_orders(arms: int, rounds: int) -> list[list[int]]:
    """The order of `arms` arms (0, 1, ...) in each round, mirrored as `round_orders` is: forward, backward,
    forward, ... (for two arms exactly AB, BA, AB, ...). `slog` measures its candidates so. Every round
    starts with the arm that ended the round before, and over an even number of rounds the first and the
    last places are shared equally; arms between them keep their middle places (with three candidates the
    second is always second)."""
    if arms < 1 or rounds < 0:
        raise ValueError(f"arms must be >= 1 and rounds >= 0, got {arms} and {rounds}")
    forward = list(range(arms))
    return [forward if index % 2 == 0 else forward[::-1] for index in range(rounds)]


def race_orders(arms: int, rounds: int, start: int = 0) -> list[list[int]]:
    """The order of `arms` arms (0 = the original, then the candidates) in rounds `start` .. `start + rounds - 1`
    of a race (tune's races over several candidates).

    Rounds come in pairs: round 2p visits the arms rotated by p (p, p+1, ..., 0, ..., p-1) and round 2p+1 the
    same rotation backwards. Why: `arm_orders`' plain mirror keeps a middle arm in the middle for ever (with
    three arms the second is never first nor last), so an effect of the first or last place alone (the first
    measurement after a switch of every knob's subject, a cache cold at the start) would favour or hurt it.
    With the rotation:

    - any two arms each go first of the two in one round of every pair: after every even round each pair of
      arms has as many rounds with one first as with the other (what compare's paired rounds assume, and why
      the race looks only after even rounds);
    - every arm's mean place is the middle one after every even round, so a place effect that grows with the
      place cancels in every pairwise ratio;
    - after 2 x arms rounds every arm has held every place exactly twice, so any place effect cancels;
    - within a pair the backward round starts with the arm that ended the forward one (the mirror's carry-over
      property, kept for half of the round boundaries).

    `start` continues the sequence after candidates were dropped: the survivors are re-numbered and the
    rotation goes on from the round reached (an even one: drops happen at looks)."""
    if arms < 1 or rounds < 0 or start < 0:
        raise ValueError(f"arms must be >= 1, rounds and start >= 0, got {arms}, {rounds} and {start}")
    orders = []
    for index in range(start, start + rounds):
        shift = (index // 2) % arms
        rotated = [(shift + place) % arms for place in range(arms)]
        orders.append(rotated if index % 2 == 0 else rotated[::-1])
    return orders
