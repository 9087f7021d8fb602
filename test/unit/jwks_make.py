# SPDX-License-Identifier: MIT
# jwks_make.py DIR: JWKS files and tokens for auth_test's JWKS cases, made by PyJWT (Debian's
# python3-jwt: its algorithms' to_jwk, and jwt.encode) and cryptography, never by canal.
# Writes DIR/jwks.json (the good set), DIR/bad-*.json (sets canal must refuse) and
# DIR/tokens (one "NAME TOKEN" per line). Claims: iat/exp around 1700000000 (auth_test's now).
import sys, json, hmac, hashlib, base64
import jwt
from jwt.algorithms import RSAAlgorithm, ECAlgorithm, HMACAlgorithm
from cryptography.hazmat.primitives.asymmetric import rsa, ec
from cryptography.hazmat.primitives import serialization

d = sys.argv[1]
def jwk(alg_cls, key, **extra):
    j = alg_cls.to_jwk(key)
    j = json.loads(j) if isinstance(j, str) else j
    j.update(extra)
    return j
r1, r2, renc, r512 = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(4))
def p256_key():
    # PyJWT 2.6's to_jwk writes an EC coordinate without its leading zero bytes, where RFC 7518
    # 6.2.1.2 asks for the full 32: canal refuses such a key, so about 1 key in 128 made the
    # good set fail. Draw again until both coordinates are 32 bytes long.
    while True:
        k = ec.generate_private_key(ec.SECP256R1())
        n = k.public_key().public_numbers()
        if n.x.bit_length() > 248 and n.y.bit_length() > 248:
            return k
e1 = p256_key()
secret = b"a JWKS oct key of more than 32 bytes!"
keys = [jwk(RSAAlgorithm, r1.public_key(), kid="r1", alg="RS256", use="sig"),
        jwk(RSAAlgorithm, r2.public_key(), kid="r2"),
        jwk(ECAlgorithm, e1.public_key(), kid="e1", alg="ES256"),
        jwk(HMACAlgorithm, secret, kid="h1", alg="HS256"),
        jwk(RSAAlgorithm, renc.public_key(), kid="enc", use="enc"),
        jwk(RSAAlgorithm, r512.public_key(), kid="r512", alg="RS512")]
json.dump({"keys": keys}, open(d + "/jwks.json", "w"))
bad = {
    "alg-of-another-kty": [dict(keys[0], alg="HS256")],
    "two-without-kid": [jwk(RSAAlgorithm, r1.public_key()), jwk(RSAAlgorithm, r2.public_key())],
    "same-kid": [keys[0], dict(keys[1], kid="r1")],
    "short-oct": [jwk(HMACAlgorithm, b"short", kid="s")],
    "ec-off-curve": [dict(keys[2], y=keys[2]["x"])],
    "ec-p384": [jwk(ECAlgorithm, ec.generate_private_key(ec.SECP384R1()).public_key(), kid="p")],
    "rsa-1024": [jwk(RSAAlgorithm, rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key(), kid="w")],
    "padded-n": [dict(keys[0], n=keys[0]["n"] + "=")],
    "no-keys": None,
}
for name, ks in bad.items():
    json.dump({"keys": ks} if ks is not None else {"key": []}, open("%s/bad-%s.json" % (d, name), "w"))
open(d + "/bad-not-json.json", "w").write('{"keys": [')
open(d + "/one-kid.json", "w").write(json.dumps({"keys": [keys[0]]}))

claims = {"iss": "https://issuer.test", "aud": "canal-test", "sub": "u", "exp": 1700000300, "iat": 1700000000}
pem = lambda k: k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def hs_with(key, hdr):
    si = b64(json.dumps(hdr).encode()) + "." + b64(json.dumps(claims).encode())
    return si + "." + b64(hmac.new(key, si.encode(), hashlib.sha256).digest())
r1pub = r1.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
t = {
    "ok-r1": jwt.encode(claims, pem(r1), "RS256", headers={"kid": "r1"}),
    "ok-r2": jwt.encode(claims, pem(r2), "RS256", headers={"kid": "r2"}),
    "ok-es": jwt.encode(claims, pem(e1), "ES256", headers={"kid": "anything"}),
    "ok-es-nokid": jwt.encode(claims, pem(e1), "ES256"),
    "ok-hs": jwt.encode(claims, secret, "HS256", headers={"kid": "h1"}),
    "ok-hs-kid-of-rsa": jwt.encode(claims, secret, "HS256", headers={"kid": "r1"}),
    "bad-r2-signed-by-r1": jwt.encode(claims, pem(r1), "RS256", headers={"kid": "r2"}),
    "bad-rs-nokid": jwt.encode(claims, pem(r1), "RS256"),
    "bad-rs-unknown-kid": jwt.encode(claims, pem(r1), "RS256", headers={"kid": "r3"}),
    "bad-rs-kid-of-hs": jwt.encode(claims, pem(r1), "RS256", headers={"kid": "h1"}),
    "bad-rs-kid-with-nul": jwt.encode(claims, pem(r1), "RS256", headers={"kid": "r1\u0000"}),
    "bad-hs-keyed-with-rsa-pem": hs_with(r1pub, {"alg": "HS256", "kid": "r1"}),
    "bad-hs-keyed-with-rsa-n": hs_with(base64.urlsafe_b64decode(keys[0]["n"] + "=="), {"alg": "HS256", "kid": "r1"}),
    "bad-enc-key": jwt.encode(claims, pem(renc), "RS256", headers={"kid": "enc"}),
    "bad-rs512-key": jwt.encode(claims, pem(r512), "RS256", headers={"kid": "r512"}),
    "ok-one-rs-any-kid": jwt.encode(claims, pem(r1), "RS256", headers={"kid": "zzz"}),
}
with open(d + "/tokens", "w") as f:
    for k, v in t.items():
        f.write("%s %s\n" % (k, v))
