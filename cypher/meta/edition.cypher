// The server's edition ('community' or 'enterprise'; Aura reports 'enterprise').
CALL dbms.components() YIELD edition
RETURN edition
