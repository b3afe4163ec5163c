// Run on the system database of a server with several databases (Enterprise, Aura): one per knowledge base.
CREATE DATABASE $name IF NOT EXISTS WAIT
