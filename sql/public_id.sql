-- Keys of public IDs: idgen.id_key_create, id_encrypt, id_decrypt,
-- id_key_grant, id_key_revoke.  A key's bytes are random, so no output
-- below shows a public ID: only what holds under every key.
\set VERBOSITY default
\set SHOW_CONTEXT never

SELECT idgen.id_key_create('pid_orders');
SELECT idgen.id_key_create('pid_users');
SELECT idgen.id_key_create('pid_js', 53);
SELECT idgen.id_key_create('pid_small', 20);
-- the view shows no key bytes
SELECT name, owner = current_user AS mine, width, created <= now() AS created
FROM idgen.id_keys WHERE name LIKE 'pid\_%' ORDER BY name;
SELECT attname FROM pg_attribute
WHERE attrelid = 'idgen.id_keys'::regclass AND attnum > 0 ORDER BY attnum;

-- 1,000,000 consecutive snowflake IDs: 1,000,000 distinct public IDs in
-- [0, 2^63), each decrypting back
CREATE TEMP TABLE sf AS
    SELECT idgen.snowflake_nextval() AS id FROM generate_series(1, 1000000);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM sf;
SELECT count(DISTINCT p) AS distinct_public, min(p) >= 0 AS in_range_low,
       bool_and(idgen.id_decrypt(p, 'pid_orders') = id) AS all_back,
       bool_and(p <> id) AS none_fixed_here
FROM (SELECT id, idgen.id_encrypt(id, 'pid_orders') AS p FROM sf) s;

-- a 53-bit key stays below 2^53 (JavaScript's Number.MAX_SAFE_INTEGER + 1)
SELECT max(idgen.id_encrypt(g, 'pid_js')) < 9007199254740992 AS below_2_53,
       min(idgen.id_encrypt(g, 'pid_js')) >= 0 AS nonneg,
       count(DISTINCT idgen.id_encrypt(g, 'pid_js')) AS distinct_public,
       bool_and(idgen.id_decrypt(idgen.id_encrypt(g, 'pid_js'), 'pid_js') = g) AS all_back
FROM generate_series(9007199254640992, 9007199254740991) g;
-- the ends of each domain
SELECT idgen.id_decrypt(idgen.id_encrypt(0, 'pid_orders'), 'pid_orders') AS zero,
       idgen.id_decrypt(idgen.id_encrypt(9223372036854775807, 'pid_orders'), 'pid_orders') AS top63,
       idgen.id_decrypt(idgen.id_encrypt(9007199254740991, 'pid_js'), 'pid_js') AS top53,
       idgen.id_decrypt(idgen.id_encrypt(1048575, 'pid_small'), 'pid_small') AS top20;
-- a 20-bit key is a permutation of its whole domain
SELECT count(DISTINCT idgen.id_encrypt(g, 'pid_small')) AS distinct_public,
       max(idgen.id_encrypt(g, 'pid_small')) AS max_public
FROM generate_series(0, 1048575) g;

-- Bad input: the SQLSTATE, nothing else
SELECT idgen.id_encrypt(-1, 'pid_orders');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_decrypt(-1, 'pid_orders');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_encrypt(9007199254740992, 'pid_js');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_decrypt(9007199254740992, 'pid_js');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_encrypt(1048576, 'pid_small');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_encrypt(1, 'no_such_key');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_decrypt(1, 'no_such_key');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_encrypt(1, '');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_encrypt(NULL, 'pid_orders') IS NULL AS null_id,
       idgen.id_decrypt(1, NULL) IS NULL AS null_key;
SELECT idgen.id_key_create('pid_bad', 19);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_create('pid_bad', 64);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_create('pid_bad', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_create(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_create('');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_create(repeat('k', 64));
\echo :LAST_ERROR_SQLSTATE
-- a name is never given to other bytes
SELECT idgen.id_key_create('pid_orders');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS bad_keys FROM idgen.id_keys WHERE name = 'pid_bad';

-- A key never changes and never goes, even for a superuser
DELETE FROM idgen.id_key WHERE name = 'pid_js';
\echo :LAST_ERROR_SQLSTATE
UPDATE idgen.id_key SET width = 40 WHERE name = 'pid_js';
\echo :LAST_ERROR_SQLSTATE
UPDATE idgen.id_key SET key = key WHERE name = 'pid_js';
SELECT count(*) AS unchanged FROM idgen.id_key WHERE name = 'pid_js';
UPDATE idgen.id_key SET key = decode(repeat('00', 32), 'hex') WHERE name = 'pid_js';
\echo :LAST_ERROR_SQLSTATE
TRUNCATE idgen.id_key;
\echo :LAST_ERROR_SQLSTATE
-- a key created in a transaction that aborts is gone, cache included
BEGIN;
SELECT idgen.id_key_create('pid_aborted');
SELECT idgen.id_decrypt(idgen.id_encrypt(5, 'pid_aborted'), 'pid_aborted') AS five;
ROLLBACK;
SELECT idgen.id_encrypt(5, 'pid_aborted');
\echo :LAST_ERROR_SQLSTATE

-- Use from SQL: the key is snowflake_nextval(), the public ID a generated
-- column (id_encrypt is IMMUTABLE) and a view
CREATE TABLE pid_order (
    id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
    public_id bigint GENERATED ALWAYS AS (idgen.id_encrypt(id, 'pid_orders')) STORED,
    note text
);
CREATE VIEW pid_order_public AS
    SELECT idgen.id_encrypt(id, 'pid_orders') AS public_id, note FROM pid_order;
INSERT INTO pid_order (note) SELECT 'order ' || g FROM generate_series(1, 10000) g;
ANALYZE pid_order;
SELECT count(*) AS rows, bool_and(o.public_id = v.public_id) AS same_public
FROM pid_order o JOIN pid_order_public v USING (note);
-- a lookup by public ID is an index scan on the key
SET plan_cache_mode = force_generic_plan;
PREPARE by_public(bigint) AS
    SELECT note FROM pid_order WHERE id = idgen.id_decrypt($1, 'pid_orders');
EXPLAIN (COSTS OFF) EXECUTE by_public(1);
SELECT count(*) AS found
FROM pid_order o, LATERAL (SELECT note FROM pid_order
                           WHERE id = idgen.id_decrypt(o.public_id, 'pid_orders')) f
WHERE f.note = o.note;
CREATE TEMP TABLE one AS SELECT public_id, note FROM pid_order WHERE note = 'order 42';
SELECT (SELECT note FROM pid_order WHERE id = idgen.id_decrypt(one.public_id, 'pid_orders')) AS note
FROM one;
DEALLOCATE by_public;
RESET plan_cache_mode;
-- a public ID of another key does not decrypt to a row of this table
SELECT count(*) AS hits_from_other_key
FROM pid_order o JOIN pid_order o2
  ON o2.id = idgen.id_decrypt(idgen.id_encrypt(o.id, 'pid_users'), 'pid_orders');
SELECT count(*) FILTER (WHERE idgen.id_encrypt(id, 'pid_users') = public_id) AS keys_agree
FROM pid_order;
-- an expression index on the public ID
CREATE INDEX pid_order_by_public ON pid_order ((idgen.id_encrypt(id, 'pid_users')));
SELECT count(*) AS via_expression
FROM pid_order o WHERE idgen.id_encrypt(id, 'pid_users') IN
    (SELECT idgen.id_encrypt(id, 'pid_users') FROM pid_order);

-- Rotation: a new key for new public IDs; old ones still decrypt
SELECT idgen.id_key_create('pid_orders_2');
SELECT count(*) AS old_still_decrypt
FROM pid_order WHERE idgen.id_decrypt(public_id, 'pid_orders') = id;
SELECT count(*) FILTER (WHERE idgen.id_encrypt(id, 'pid_orders_2') = public_id) AS rotated_agree
FROM pid_order;

-- Privileges: only the owner (its members) and superusers use a key
CREATE ROLE pid_owner;
CREATE ROLE pid_other;
CREATE ROLE pid_member IN ROLE pid_owner;
GRANT EXECUTE ON FUNCTION idgen.id_key_create(text, int),
    idgen.id_key_grant(text, text, text), idgen.id_key_revoke(text, text, text)
    TO pid_owner, pid_other;
SET ROLE pid_owner;
SELECT idgen.id_key_create('pid_priv', 40);
SELECT idgen.id_decrypt(idgen.id_encrypt(77, 'pid_priv'), 'pid_priv') AS owner_uses;
SELECT key FROM idgen.id_key;
\echo :LAST_ERROR_SQLSTATE
SELECT name, owner, width FROM idgen.id_keys WHERE name = 'pid_priv';
SELECT idgen.id_encrypt(1, 'pid_orders');
\echo :LAST_ERROR_SQLSTATE
SET ROLE pid_member;
SELECT idgen.id_decrypt(idgen.id_encrypt(78, 'pid_priv'), 'pid_priv') AS member_uses;
SET ROLE pid_other;
SELECT idgen.id_encrypt(1, 'pid_priv');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_decrypt(1, 'pid_priv');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_grant('pid_priv', 'use', 'pid_other');
\echo :LAST_ERROR_SQLSTATE
SET ROLE pid_owner;
SELECT idgen.id_key_grant('pid_priv', 'use', 'pid_other');
SELECT idgen.id_key_grant('pid_priv', 'read', 'pid_other');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_grant('pid_priv', 'use', 'no_such_role');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_key_grant('no_such_key', 'use', 'pid_other');
\echo :LAST_ERROR_SQLSTATE
SET ROLE pid_other;
SELECT idgen.id_decrypt(idgen.id_encrypt(79, 'pid_priv'), 'pid_priv') AS granted_uses;
SET ROLE pid_owner;
SELECT idgen.id_key_revoke('pid_priv', 'use', 'pid_other');
SET ROLE pid_other;
SELECT idgen.id_encrypt(1, 'pid_priv');
\echo :LAST_ERROR_SQLSTATE
-- to public, and back
SET ROLE pid_owner;
SELECT idgen.id_key_grant('pid_priv', 'use', 'public');
SET ROLE pid_other;
SELECT idgen.id_decrypt(idgen.id_encrypt(80, 'pid_priv'), 'pid_priv') AS public_uses;
SET ROLE pid_owner;
SELECT idgen.id_key_revoke('pid_priv', 'use', 'public');
SET ROLE pid_other;
SELECT idgen.id_encrypt(1, 'pid_priv');
\echo :LAST_ERROR_SQLSTATE
-- a revoke in the transaction refuses the next statement, in REPEATABLE READ too
RESET ROLE;
SELECT idgen.id_key_grant('pid_priv', 'use', 'pid_other');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL ROLE pid_other;
SELECT idgen.id_encrypt(1, 'pid_priv') >= 0 AS before_revoke;
RESET ROLE;
SELECT idgen.id_key_revoke('pid_priv', 'use', 'pid_other');
SET LOCAL ROLE pid_other;
SELECT idgen.id_encrypt(1, 'pid_priv');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
RESET ROLE;
SELECT grantee, privilege FROM idgen.id_key_privilege WHERE key_name = 'pid_priv' ORDER BY 1;
SELECT idgen.id_key_revoke('pid_priv', 'all', 'pid_other');
SELECT count(*) AS grants_left FROM idgen.id_key_privilege WHERE key_name = 'pid_priv';

DROP VIEW pid_order_public;
DROP TABLE pid_order;
REVOKE EXECUTE ON FUNCTION idgen.id_key_create(text, int),
    idgen.id_key_grant(text, text, text), idgen.id_key_revoke(text, text, text)
    FROM pid_owner, pid_other;
DROP ROLE pid_member;
DROP ROLE pid_other;
DROP ROLE pid_owner;
