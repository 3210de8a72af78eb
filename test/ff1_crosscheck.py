#!/usr/bin/env python3
"""An FF1 of its own, to check idgen's (src/ff1.c) against.

FF1 of NIST SP 800-38G (algorithms 6, 7 and 8), written here from the spec
on Python's integers and AES-ECB from the cryptography module (Debian's
python3-cryptography), sharing no code with src/ff1.c.  It checks NIST's FF1
samples 1-9 (FF1samples.pdf) itself, then hands the same samples and random
cases to test/unit/ff1_driver (src/ff1.c, both of its paths) and compares
the answers: the integer domains [0, 2^width) at widths 20, 53 and 63 with
random keys (AES-128, -192, -256), tweaks (none, and up to 64 bytes) and
values (0 and 2^width - 1 among them), and numeral strings of radices 2 to
65536 and 2 to 64 numerals.  Prints one line per mismatch and a final
"N passed, N failed" line; exits 1 if any failed.

Usage: python3 test/ff1_crosscheck.py PATH/TO/ff1_driver [SEED]
"""
import random
import subprocess
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class FF1:
    def __init__(self, key, radix):
        self.radix = radix
        # ECB on single blocks is CIPH_K; the CBC-MAC is chained by hand
        self._ecb = Cipher(algorithms.AES(key), modes.ECB()).encryptor()

    def _ciph(self, block):
        return self._ecb.update(block)

    def _prf(self, x):
        # Algorithm 6: Y_0 = 0^128, Y_j = CIPH_K(Y_{j-1} xor X_j)
        y = bytes(16)
        for j in range(0, len(x), 16):
            y = self._ciph(bytes(a ^ b for a, b in zip(y, x[j:j + 16])))
        return y

    def _num(self, numerals):
        value = 0
        for x in numerals:
            value = value * self.radix + x
        return value

    def _str(self, value, m):
        out = []
        for _ in range(m):
            value, r = divmod(value, self.radix)
            out.append(r)
        return out[::-1]

    def _round(self, T, n, u, v, i, X):
        radix, t = self.radix, len(T)
        # 3. b = ceil(ceil(v * log2(radix)) / 8): the least k with
        # 2^k >= radix^v, in whole bytes
        k = 0
        while (1 << k) < radix ** v:
            k += 1
        b = -(-k // 8)
        # 4. d = 4 * ceil(b / 4) + 4
        d = 4 * -(-b // 4) + 4
        # 5. P
        P = (bytes([1, 2, 1]) + radix.to_bytes(3, "big") + bytes([10, u % 256])
             + n.to_bytes(4, "big") + t.to_bytes(4, "big"))
        # 6.i. Q = T || [0]^((-t-b-1) mod 16) || [i]^1 || [NUM_radix(X)]^b
        Q = T + bytes((-t - b - 1) % 16) + bytes([i]) + self._num(X).to_bytes(b, "big")
        # 6.ii. R = PRF(P || Q)
        R = self._prf(P + Q)
        # 6.iii. S: R || CIPH_K(R xor [1]^16) || ..., its first d bytes
        S = R
        for j in range(1, -(-d // 16)):
            S += self._ciph((int.from_bytes(R, "big") ^ j).to_bytes(16, "big"))
        # 6.iv. y = NUM(S)
        return int.from_bytes(S[:d], "big")

    def encrypt(self, T, X):
        n = len(X)
        u, v = n // 2, n - n // 2
        A, B = list(X[:u]), list(X[u:])
        for i in range(10):
            y = self._round(T, n, u, v, i, B)
            m = u if i % 2 == 0 else v
            c = (self._num(A) + y) % self.radix ** m
            A, B = B, self._str(c, m)
        return A + B

    def decrypt(self, T, X):
        n = len(X)
        u, v = n // 2, n - n // 2
        A, B = list(X[:u]), list(X[u:])
        for i in reversed(range(10)):
            y = self._round(T, n, u, v, i, A)
            m = u if i % 2 == 0 else v
            c = (self._num(B) - y) % self.radix ** m
            B, A = A, self._str(c, m)
        return A + B


def encrypt_int(key, tweak, width, value):
    bits = [(value >> (width - 1 - j)) & 1 for j in range(width)]
    out = FF1(key, 2).encrypt(tweak, bits)
    return int("".join(map(str, out)), 2)


DIGITS36 = "0123456789abcdefghijklmnopqrstuvwxyz"
KEY128 = "2B7E151628AED2A6ABF7158809CF4F3C"
KEY192 = KEY128 + "EF4359D8D580AA4F"
KEY256 = KEY192 + "7F036D6F04FC6A94"
PT10, PT36 = "0123456789", "0123456789abcdefghi"
TWEAK10, TWEAK36 = "39383736353433323130", "3737373770717273373737"
# NIST's FF1 samples 1-9 (FF1samples.pdf): key, radix, tweak, PT, CT
NIST = [
    (KEY128, 10, "", PT10, "2433477484"),
    (KEY128, 10, TWEAK10, PT10, "6124200773"),
    (KEY128, 36, TWEAK36, PT36, "a9tv40mll9kdu509eum"),
    (KEY192, 10, "", PT10, "2830668132"),
    (KEY192, 10, TWEAK10, PT10, "2496655549"),
    (KEY192, 36, TWEAK36, PT36, "xbj3kv35jrawxv32ysr"),
    (KEY256, 10, "", PT10, "6657667009"),
    (KEY256, 10, TWEAK10, PT10, "1001623463"),
    (KEY256, 36, TWEAK36, PT36, "xs8a0azh2avyalyzuwd"),
]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ff1_crosscheck.py PATH/TO/ff1_driver [SEED]")
    driver = sys.argv[1]
    rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261202)
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("ff1_crosscheck: MISMATCH: " + what)

    # NIST's samples, in this implementation
    for s, (key, radix, tweak, pt, ct) in enumerate(NIST, 1):
        f = FF1(bytes.fromhex(key), radix)
        x = [DIGITS36.index(ch) for ch in pt]
        y = f.encrypt(bytes.fromhex(tweak), x)
        check("".join(DIGITS36[j] for j in y) == ct, "sample %d encrypts here to %s" % (s, y))
        check(f.decrypt(bytes.fromhex(tweak), y) == x, "sample %d decrypts here" % s)

    # Cases for the driver: (line, expected answer, description)
    cases = []

    def str_case(key, radix, tweak, x, path, what):
        want = ",".join(map(str, FF1(key, radix).encrypt(tweak, x)))
        line = "str %d %s %s %s %s" % (radix, key.hex(), tweak.hex() or "-", path,
                                      ",".join(map(str, x)))
        cases.append((line, want, what))

    def int_case(key, tweak, width, value, path):
        want = str(encrypt_int(key, tweak, width, value))
        line = "int %d %s %s %s %d" % (width, key.hex(), tweak.hex() or "-", path, value)
        cases.append((line, want, "width %d, value %d, AES-%d, %d-byte tweak, path %s"
                      % (width, value, 8 * len(key), len(tweak), path)))

    for s, (key, radix, tweak, pt, _) in enumerate(NIST, 1):
        for path in "fg":
            str_case(bytes.fromhex(key), radix, bytes.fromhex(tweak),
                     [DIGITS36.index(ch) for ch in pt], path, "NIST sample %d, path %s" % (s, path))

    def rand_key():
        return bytes(rnd.getrandbits(8) for _ in range(rnd.choice((16, 24, 32))))

    def rand_tweak():
        t = rnd.choice((0, 0, 1, 7, 8, 16, 31, 64, rnd.randrange(65)))
        return bytes(rnd.getrandbits(8) for _ in range(t))

    for width in (20, 53, 63):
        for j in range(300):
            value = 0 if j == 0 else (1 << width) - 1 if j == 1 else rnd.getrandbits(width)
            int_case(rand_key(), rand_tweak(), width, value, "g" if j % 5 == 0 else "f")

    for radix in (2, 3, 5, 7, 10, 16, 26, 36, 62, 100, 255, 256, 1000, 4096, 65535, 65536):
        minlen = 2
        while radix ** minlen < 1000000:
            minlen += 1
        for j in range(16):
            n = minlen if j == 0 else 64 if j == 1 else rnd.randint(minlen, 64)
            x = [rnd.randrange(radix) for _ in range(n)]
            str_case(rand_key(), radix, rand_tweak(), x, "g" if j % 3 == 0 else "f",
                     "radix %d, %d numerals" % (radix, n))

    proc = subprocess.run([driver], input="".join(c[0] + "\n" for c in cases),
                          capture_output=True, text=True, check=False)
    got = proc.stdout.splitlines()
    check(proc.returncode == 0 and len(got) == len(cases),
          "the driver exited %d with %d answers for %d cases: %s"
          % (proc.returncode, len(got), len(cases), proc.stderr.strip()))
    for (line, want, what), answer in zip(cases, got):
        check(answer == want, "%s: src/ff1.c gives %s, this one %s" % (what, answer, want))
    print("ff1_crosscheck: %d cases (NIST samples 1-9; widths 20, 53, 63; radices 2 to 65536)"
          " against %s" % (len(cases), driver))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
