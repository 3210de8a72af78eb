--
-- Refusals and guarantees that no other test reached (issue 40, point 3:
-- what coverage showed untested).  Each outcome is printed as its SQLSTATE
-- and message, or "ok".
--
-- The extension in idgen.database too, where the worker keeps its
-- reservation (as sql/snowflake.sql), and one ID drawn: the reservation is
-- made
SELECT current_database() AS home,
       current_setting('idgen.database') AS idgen_db \gset
\c :idgen_db
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
\c :home
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
SELECT idgen.snowflake_nextval() > 0 AS drawn;

CREATE FUNCTION try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- A table's own code cannot call adopt_column's steps while adopt_column
-- rewrites the table: not adopt_snowflake_advance (closed once the first
-- step that alters the table began), not adopt_column itself (no nested
-- adoption).  The CHECK constraint's function acts only while
-- refusals.armed is on; each attempt fails as a whole, the column stays an
-- int4 serial, and afterwards the adoption goes through.  (The code runs
-- with adopt_column's own search_path: it names its tables with their
-- schema)
CREATE TABLE rf_t (id serial PRIMARY KEY);
CREATE TABLE rf_other (id serial PRIMARY KEY);
CREATE FUNCTION rf_code(id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('refusals.armed', true) = 'advance' THEN
        PERFORM idgen.adopt_snowflake_advance('public.rf_t', 9223372036854775000);
    ELSIF current_setting('refusals.armed', true) = 'nested' THEN
        PERFORM idgen.adopt_column('public.rf_other', 'id', 'snowflake');
    END IF;
    RETURN true;
END
$$;
ALTER TABLE rf_t ADD CHECK (rf_code(id));
INSERT INTO rf_t DEFAULT VALUES;
SET refusals.armed = 'advance';
SELECT try($$SELECT idgen.adopt_column('rf_t', 'id', 'snowflake')$$);
SET refusals.armed = 'nested';
SELECT try($$SELECT idgen.adopt_column('rf_t', 'id', 'snowflake')$$);
SELECT format_type(atttypid, atttypmod), pg_get_expr(adbin, adrelid)
  FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
 WHERE attrelid = 'rf_t'::regclass AND attname = 'id';
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'rf_other'::regclass AND attname = 'id';
RESET refusals.armed;
SELECT try($$SELECT idgen.adopt_column('rf_t', 'id', 'snowflake')$$);
SELECT format_type(atttypid, atttypmod), pg_get_expr(adbin, adrelid)
  FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
 WHERE attrelid = 'rf_t'::regclass AND attname = 'id';
DROP TABLE rf_t, rf_other;
DROP FUNCTION rf_code(bigint);

-- A relation that does not exist (an OID of no table): 42P01
SELECT try($$SELECT idgen.adopt_column(4294967295::oid::regclass, 'id', 'snowflake')$$);

-- NULL where a segment tag function needs a value: 22004
SELECT try($$SELECT idgen.segment_export_leaf(NULL, false)$$);
SELECT try($$SELECT idgen.segment_export_leaf('rf_tag', NULL)$$);
SELECT try($$SELECT idgen.segment_set_owner('rf_tag', NULL)$$);

-- Only a superuser accepts a change of layout, even one granted EXECUTE
CREATE ROLE rf_nobody;
GRANT EXECUTE ON FUNCTION idgen.snowflake_accept_layout() TO rf_nobody;
SET ROLE rf_nobody;
SELECT try($$SELECT idgen.snowflake_accept_layout()$$);
RESET ROLE;
-- (a superuser, with no change to accept: false)
SELECT idgen.snowflake_accept_layout();
REVOKE EXECUTE ON FUNCTION idgen.snowflake_accept_layout() FROM rf_nobody;
DROP ROLE rf_nobody;

-- Settings refused before they reach a configuration file: a node id that
-- is neither a number, 'auto' nor 'citus', or is past the largest int
-- (22023), a layout that does not parse (22023), an epoch date that does
-- not exist (22008).  (ALTER SYSTEM runs outside a transaction block: each
-- error and its SQLSTATE shown)
ALTER SYSTEM SET idgen.node_id = 'first';
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER SYSTEM SET idgen.node_id = '-1';
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER SYSTEM SET idgen.node_id = '3000000000';
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER SYSTEM SET idgen.layout = 'ts=41,node=10';
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER SYSTEM SET idgen.layout = 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-02-31';
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- Genes of text keys are Java's String.hashCode() over UTF-16 code units
-- in a database of any encoding: a LATIN1 database gives the genes of a
-- UTF8 one ('é' is 233 in Java), and in a SQL_ASCII database a key that is
-- not UTF-8 is refused with 22021 (docs/reference.md)
CREATE TABLE rf_keys (k bytea);
INSERT INTO rf_keys VALUES ('\x74657374726f79'), ('\xc3a9'), ('\x6e61c3af7665'), ('\x5374726173c39f65');
SELECT string_agg(idgen.gene_of(convert_from(k, 'UTF8'), 16)::text, ',' ORDER BY k) AS genes_utf8
  FROM rf_keys \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS idgen_rf_latin1;
DROP DATABASE IF EXISTS idgen_rf_ascii;
RESET client_min_messages;
CREATE DATABASE idgen_rf_latin1 TEMPLATE template0 ENCODING 'LATIN1' LOCALE 'C';
CREATE DATABASE idgen_rf_ascii TEMPLATE template0 ENCODING 'SQL_ASCII' LOCALE 'C';
\c idgen_rf_latin1
SET client_min_messages = warning;
CREATE EXTENSION idgen;
RESET client_min_messages;
CREATE TABLE rf_keys (k bytea);
INSERT INTO rf_keys VALUES ('\x74657374726f79'), ('\xc3a9'), ('\x6e61c3af7665'), ('\x5374726173c39f65');
SELECT string_agg(idgen.gene_of(convert_from(k, 'UTF8'), 16)::text, ',' ORDER BY k) = :'genes_utf8' AS same_genes,
       idgen.gene_of(convert_from('\xc3a9', 'UTF8'), 16) AS e_acute,
       idgen.gene_of('testroy', 3) AS testroy
  FROM rf_keys;
-- (a segment tag drawn here: this database's segment worker is connected,
-- for the copy below)
SELECT idgen.segment_create('rf_tag', 1000, 10);
SELECT idgen.segment_nextval('rf_tag') AS first_id;
-- The extension dropped and created again without a restart: the tag
-- outlives it as a floor (docs/durability.md).  The segments buffered for
-- it went with the table, so it hands out nothing until it is created
-- again (42704), and then only above every ID drawn before
SELECT max(idgen.segment_nextval('rf_tag')) AS last_id FROM generate_series(1, 25) \gset
DROP EXTENSION idgen;
CREATE EXTENSION idgen;
\set VERBOSITY terse
SELECT idgen.segment_nextval('rf_tag');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT max_id >= :last_id AS floor_covers_drawn FROM idgen.segment_floor WHERE biz_tag = 'rf_tag';
SELECT idgen.segment_create('rf_tag', (SELECT max_id + 1 FROM idgen.segment_floor WHERE biz_tag = 'rf_tag'), 10);
SELECT idgen.segment_nextval('rf_tag') > :last_id AS above_earlier_ids;
\c idgen_rf_ascii
SET client_min_messages = warning;
CREATE EXTENSION idgen;
RESET client_min_messages;
SELECT idgen.gene_of('testroy', 3) AS testroy;
CREATE FUNCTION try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
SELECT try($$SELECT idgen.gene_of(convert_from('\x74ff', 'SQL_ASCII'), 8)$$);
-- The file that keeps a database's tags across DROP EXTENSION
-- (idgen.tags.<database oid> in the data directory), found corrupt: DROP
-- EXTENSION is refused with XX001 rather than losing a tag's floor, and
-- the extension stays (DROP DATABASE below removes the file)
DO $$
BEGIN
    EXECUTE format('COPY (SELECT %L) TO %L', 'not a file of kept tags',
                   current_setting('data_directory') || '/idgen.tags.' ||
                   (SELECT oid FROM pg_database WHERE datname = current_database()));
END
$$;
SELECT regexp_replace(try('DROP EXTENSION idgen'), 'idgen\.tags\.[0-9]+', 'idgen.tags.N');
SELECT count(*) AS extension_stays FROM pg_extension WHERE extname = 'idgen';
-- Its event trigger's function, called as a plain function
SELECT try($$SELECT idgen.segment_keep_on_drop()$$);
-- The table triggers' functions: the C one with 39P01, as PostgreSQL's own
-- C trigger functions; the PL/pgSQL ones with PL/pgSQL's own 0A000
SELECT try($$SELECT idgen.segment_privileges_changed()$$);
SELECT try($$SELECT idgen.segment_alloc_guard()$$);
SELECT try($$SELECT idgen.segment_privilege_guard()$$);
\c :home
-- A role with CREATEDB (not the owner) copies a template database right
-- after a draw there: idgen's ProcessUtility hook (module.c) makes the
-- database's segment worker leave it, as for the owner, so the copy does
-- not fail with 55006 (source database is being accessed by other users)
ALTER DATABASE idgen_rf_latin1 IS_TEMPLATE true;
CREATE ROLE rf_creator CREATEDB;
SET ROLE rf_creator;
CREATE DATABASE idgen_rf_copy TEMPLATE idgen_rf_latin1;
RESET ROLE;
SELECT datname FROM pg_database WHERE datname = 'idgen_rf_copy';
DROP DATABASE idgen_rf_copy WITH (FORCE);
-- A copy the role may not make (a database that is not a template, or a
-- role without CREATEDB) stays PostgreSQL's refusal (42501): the hook does
-- not stop that database's worker for it
SET ROLE rf_creator;
CREATE DATABASE idgen_rf_nocopy TEMPLATE idgen_rf_ascii;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;
CREATE ROLE rf_nocreate;
SET ROLE rf_nocreate;
CREATE DATABASE idgen_rf_nocopy TEMPLATE idgen_rf_latin1;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;
DROP ROLE rf_nocreate;
-- TEMPLATE DEFAULT names no database for the hook
CREATE DATABASE idgen_rf_default TEMPLATE DEFAULT;
DROP DATABASE idgen_rf_default;
DROP ROLE rf_creator;
ALTER DATABASE idgen_rf_latin1 IS_TEMPLATE false;
DROP DATABASE idgen_rf_latin1 WITH (FORCE);
DROP DATABASE idgen_rf_ascii WITH (FORCE);
DROP TABLE rf_keys;
DROP FUNCTION try(text);
