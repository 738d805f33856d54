"""Passwords: argon2id hashes (argon2-cffi's RFC 9106 low-memory profile) and the length policy."""

from __future__ import annotations

from functools import cache

from stackbench.base.errors import UsageError

MIN_LENGTH = 12  # OWASP ASVS 5.0 6.2.1 asks for 8 at least; 12 costs a user nothing with a password manager
MAX_LENGTH = 1024  # a bound on the work one login can ask of argon2, far above any real password


def check_policy(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise UsageError(f"the password has {len(password)} characters, fewer than {MIN_LENGTH}",
                         f"Choose a password of at least {MIN_LENGTH} characters (a passphrase works well)")
    if len(password) > MAX_LENGTH:
        raise UsageError(f"the password is longer than {MAX_LENGTH} characters", "Choose a shorter one")


@cache
def _hasher():  # noqa: ANN202 - argon2 is imported only here
    from argon2 import PasswordHasher

    return PasswordHasher()  # argon2id, RFC 9106 low-memory parameters


def hash_password(password: str) -> str:
    check_policy(password)
    return _hasher().hash(password)


@cache
def _dummy_hash() -> str:
    return _hasher().hash("no such account: this hash is only checked to spend the same time")


def verify_password(stored_hash: str | None, password: str) -> bool:
    """Whether `password` matches; with no account (`stored_hash` None) a dummy hash is checked anyway, so
    a wrong name costs the same time as a wrong password and names cannot be found by timing."""
    from argon2.exceptions import InvalidHashError, VerificationError

    if len(password) > MAX_LENGTH:
        return False
    try:
        matched = _hasher().verify(stored_hash or _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False
    return matched and stored_hash is not None


def needs_rehash(stored_hash: str) -> bool:
    return _hasher().check_needs_rehash(stored_hash)
