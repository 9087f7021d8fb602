# SPDX-License-Identifier: MIT
# jwt_tok.py KEYDIR KIND [JSON claim overrides] [JSON header]: prints a JWT made by PyJWT
# (Debian's python3-jwt) or, for the attacks PyJWT refuses to make, by hand with hmac and
# cryptography; never by canal. KEYDIR holds hs (the HS256 secret file), rsa.pem, rsa.pub,
# ec.pem. Claims default to iss https://issuer.test, aud canal-test, sub user-1, exp in 300 s,
# iat now, scope "read admin"; an override of null removes the claim. Used by auth.sh and
# secure.sh.
import sys, json, time, base64, hmac, hashlib, jwt
from cryptography.hazmat.primitives import serialization, hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

k, kind = sys.argv[1], sys.argv[2]
extra = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
hdr = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
now = int(time.time())
claims = {"iss": "https://issuer.test", "aud": "canal-test", "sub": "user-1", "exp": now + 300, "iat": now,
          "scope": "read admin"}
claims.update(extra)
claims = {a: b for a, b in claims.items() if b is not None}
hs = open(k + "/hs", "rb").read()
hs = hs[:-2] if hs.endswith(b"\r\n") else hs[:-1] if hs.endswith(b"\n") else hs
rsa = open(k + "/rsa.pem", "rb").read()
ecp = open(k + "/ec.pem", "rb").read()
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
mac = lambda key, si: b64(hmac.new(key, si.encode(), hashlib.sha256).digest())
# a header and payload given as raw bytes, HMAC-signed with the HS256 secret
def hs_raw(h, body):
    si = b64(h) + "." + b64(body)
    return si + "." + mac(hs, si)
# ES256 with the signature's R and S given
def es_rs(r, s):
    si = b64(json.dumps({"alg": "ES256"}).encode()) + "." + b64(json.dumps(claims).encode())
    return si + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # P-256's order

if kind == "hs": t = jwt.encode(claims, hs, "HS256", headers=hdr)
elif kind == "rs": t = jwt.encode(claims, rsa, "RS256", headers=hdr)
elif kind == "es": t = jwt.encode(claims, ecp, "ES256", headers=hdr)
elif kind == "none":   # alg none, in the case given in the header
    t = b64(json.dumps(hdr or {"alg": "none"}).encode()) + "." + b64(json.dumps(claims).encode()) + "."
elif kind == "hsalg":  # the header given whole (any alg, none, a number), HMAC-SHA256 signed
    t = hs_raw(json.dumps(hdr).encode(), json.dumps(claims).encode())
elif kind == "confused":  # HS256 keyed with the RS256 public key (PyJWT refuses: done by hand)
    pub = open(k + "/rsa.pub", "rb").read()
    si = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
    t = si + "." + mac(pub, si)
elif kind == "esder":  # ES256 with a DER signature
    key = serialization.load_pem_private_key(ecp, None)
    si = b64(json.dumps({"alg": "ES256"}).encode()) + "." + b64(json.dumps(claims).encode())
    t = si + "." + b64(key.sign(si.encode(), ec.ECDSA(hashes.SHA256())))
elif kind == "eshighs":  # a valid ES256 signature with s replaced by n - s (high S)
    key = serialization.load_pem_private_key(ecp, None)
    si = b64(json.dumps({"alg": "ES256"}).encode()) + "." + b64(json.dumps(claims).encode())
    r, s = utils.decode_dss_signature(key.sign(si.encode(), ec.ECDSA(hashes.SHA256())))
    t = si + "." + b64(r.to_bytes(32, "big") + (N - s).to_bytes(32, "big"))
elif kind == "es0": t = es_rs(0, 1)
elif kind == "esn": t = es_rs(N, 1)
elif kind == "dup":  # a duplicate member name: the first says admin, the last does not
    t = hs_raw(b'{"alg":"HS256"}', ('{"iss":"https://issuer.test","aud":"canal-test","sub":"u","exp":%d,'
                                    '"scope":"admin","scope":"read"}' % (now + 300)).encode())
elif kind == "deep":
    t = hs_raw(b'{"alg":"HS256"}', b"[" * 5000 + b"]" * 5000)
elif kind == "array":   # a payload that is a JSON array, validly signed
    t = hs_raw(b'{"alg":"HS256"}', json.dumps([claims]).encode())
elif kind == "latin1":  # a payload that is not UTF-8, validly signed
    t = hs_raw(b'{"alg":"HS256"}', json.dumps(claims).encode()[:-1] + b',"x":"\xe9"}')
elif kind == "padded":  # segments with '=' padding (RFC 7515 2 forbids it), validly signed
    h = base64.urlsafe_b64encode(b'{"alg":"HS256"} ').decode()
    p = base64.urlsafe_b64encode(json.dumps(claims).encode() + b" ").decode()
    si = h + "." + p
    t = si + "." + mac(hs, si)
elif kind == "std64":   # standard base64 ('+', '/') instead of base64url, validly signed
    i = 0
    while True:  # "?" is 0x3f: some run of them makes a "/" (or a "+")
        p = base64.b64encode(json.dumps(dict(claims, pad="?" * i)).encode()).rstrip(b"=").decode()
        if "/" in p or "+" in p: break
        i += 1
    si = b64(b'{"alg":"HS256"}') + "." + p
    t = si + "." + mac(hs, si)
print(t)
