"""Binary-reflected Gray codes (Mathur and Johnsson 1993, §3, Table 1) for d = 1..16."""
import numpy as np
import pytest

from collective_lib.cm200.gray import (bits, gray, gray_code, gray_inverse, gray_table,
                                       ring_embedding, sh, transition_sequence)

DS = range(1, 17)


def reflected(d):
    """The recursive definition of §3: G_1 = (0, 1); G_{d+1} = 0||G_d, then 1||G_d reversed."""
    code = [0, 1]
    for k in range(1, d):
        code = code + [(1 << k) | g for g in reversed(code)]
    return code


@pytest.mark.parametrize("d", DS)
def test_gray_code_is_the_reflected_code(d):
    assert gray_code(d).tolist() == reflected(d)


@pytest.mark.parametrize("d", DS)
def test_neighbours_differ_in_one_bit_cyclically(d):
    code = gray_code(d)
    diff = code ^ np.roll(code, -1)                    # includes last -> first
    assert np.all(diff > 0) and np.all(diff & (diff - 1) == 0), f"d={d}"


@pytest.mark.parametrize("d", DS)
def test_bijection_and_inverse(d):
    n = 1 << d
    code = gray_code(d)
    assert sorted(code.tolist()) == list(range(n))
    assert np.array_equal(gray_inverse(code), np.arange(n))
    assert np.array_equal(gray(gray_inverse(np.arange(n))), np.arange(n))
    for i in (0, 1, n // 3, n - 1):                    # Python ints as well
        assert gray_inverse(gray(i)) == i and gray(i) == int(code[i])


@pytest.mark.parametrize("d", DS)
def test_transition_sequence(d):
    code = gray_code(d)
    t = transition_sequence(d)
    assert len(t) == (1 << d) - 1
    assert np.array_equal(code[1:] ^ code[:-1], 1 << t)
    assert np.array_equal(t, t[::-1]), "the sequence is symmetric about its midpoint (§4.2.3)"
    cyclic = transition_sequence(d, cyclic=True)
    assert cyclic.tolist() == t.tolist() + [d - 1]
    assert int(code[-1] ^ code[0]) == 1 << int(cyclic[-1])


@pytest.mark.parametrize("d", DS)
def test_sh_is_a_cyclic_left_shift(d):
    rng = np.random.default_rng(d)
    x = rng.integers(0, 1 << d, size=50)
    mask = (1 << d) - 1
    for k in range(-1, d + 2):
        expected = [int(bits(int(v), d)[k % d:] + bits(int(v), d)[:k % d], 2) for v in x]
        assert sh(x, d, k).tolist() == expected, (d, k)
    assert np.array_equal(sh(sh(x, d, 1), d, d - 1), x)
    assert np.array_equal(sh(x, d, d), x & mask)
    assert sh(int(x[0]), d) == int(sh(x[:1], d)[0])


@pytest.mark.parametrize("d", DS)
def test_reflection_rule(d):
    """The (d+1)-bit code is the d-bit code, then the d-bit code backwards with a 1 in front."""
    code = gray_code(d)
    assert np.array_equal(gray_code(d + 1), np.concatenate([code, code[::-1] | 1 << d]))


@pytest.mark.parametrize("d", DS)
def test_shifted_cycles_flip_d_different_bits_in_every_step(d):
    """§4.2: sh^i(G) is a Hamiltonian cycle flipping bit (t_u + i) mod d in step u, so in
    every step the d shifted cycles use d different dimensions."""
    t = transition_sequence(d)
    for i in range(d):
        cycle = sh(gray_code(d), d, i)
        assert len(set(cycle.tolist())) == 1 << d
        assert np.array_equal(np.log2(cycle[:-1] ^ cycle[1:]).astype(int), (t + i) % d)
    assert all(len({(int(b) + i) % d for i in range(d)}) == d for b in t)
    assert sh(0b011, 3) == 0b110


def test_table_1_and_the_papers_examples():
    assert gray_table(3) == [(0, "000"), (1, "001"), (2, "011"), (3, "010"),
                             (4, "110"), (5, "111"), (6, "101"), (7, "100")]
    assert transition_sequence(3, cyclic=True).tolist() == [0, 1, 0, 2, 0, 1, 0, 2]
    assert gray_inverse(0b101) == 6 and gray(7) == 0b100          # §4.1, PA = 101, s = 1
    assert ring_embedding(3).tolist() == gray_code(3).tolist()
    assert gray_code(0).tolist() == [0] and transition_sequence(0).size == 0


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_bad_input_is_named(bad):
    with pytest.raises(ValueError, match=repr(bad) if not isinstance(bad, str) else "'3'"):
        gray(bad)


def test_bad_d_and_overflowing_sh():
    with pytest.raises(ValueError, match="d=-1"):
        gray_code(-1)
    with pytest.raises(ValueError, match="fit in d=3 bits"):
        sh(8, 3)
    with pytest.raises(ValueError, match="integers"):
        gray(np.array([0.5]))
