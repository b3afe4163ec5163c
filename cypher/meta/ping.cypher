// A trivial read: connectivity checks, and learning which database the server treats as home.
RETURN 1 AS ok
