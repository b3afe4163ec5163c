// Empties the database in bounded transactions (auto-commit only). For throwaway knowledge bases.
MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
