--
-- Privileges of segment tags (issue 37, point 6): draw and read, granted
-- and revoked by the tag's owner, to roles (and their members) or public.
-- Each REVOKE is shown taking effect in this same session, after the
-- session had drawn with the privilege (what a backend remembers is
-- checked again).  After each error, :LAST_ERROR_SQLSTATE.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
DROP ROLE IF EXISTS tp_owner;
DROP ROLE IF EXISTS tp_other;
DROP ROLE IF EXISTS tp_member;
DROP ROLE IF EXISTS tp_group;
RESET client_min_messages;
\set VERBOSITY default
CREATE ROLE tp_owner;
CREATE ROLE tp_other;
CREATE ROLE tp_group NOLOGIN;
CREATE ROLE tp_member IN ROLE tp_group;
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_drop(text), idgen.segment_grant(text, text, text),
    idgen.segment_revoke(text, text, text) TO tp_owner;
-- tp_other may call segment_grant, but owns no tag
GRANT EXECUTE ON FUNCTION idgen.segment_grant(text, text, text) TO tp_other;

-- The table of grants is kept by pg_dump
SELECT 'idgen.segment_privilege'::regclass = ANY (extconfig) AS dumped
  FROM pg_extension WHERE extname = 'idgen';

SET ROLE tp_owner;
SELECT idgen.segment_create('tp', step => 10);
RESET ROLE;

-- The default, as before 0.4.0: every role draws; only the owner (and
-- pg_monitor) sees the tag's position
SET ROLE tp_other;
SELECT idgen.segment_nextval('tp') > 0 AS other_draws;
SELECT count(*) AS other_sees FROM idgen.segment_status WHERE biz_tag = 'tp';
SET ROLE tp_owner;
SELECT count(*) AS owner_sees FROM idgen.segment_status WHERE biz_tag = 'tp';
RESET ROLE;
SELECT public_draw, public_read FROM idgen.segment_alloc WHERE biz_tag = 'tp';
SET ROLE tp_owner;

-- The owner revokes draw from public: the role that drew a moment ago is
-- refused, and so is its currval (a sequence's currval needs a privilege)
SELECT idgen.segment_revoke('tp', 'draw', 'public');
SET ROLE tp_other;
SELECT idgen.segment_nextval('tp');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_currval('tp');
\echo :LAST_ERROR_SQLSTATE
-- The owner and a superuser still draw
SET ROLE tp_owner;
SELECT idgen.segment_nextval('tp') > 0 AS owner_draws;
RESET ROLE;
SELECT idgen.segment_nextval('tp') > 0 AS superuser_draws;

-- Granted to a group: its member draws, the other role does not
SET ROLE tp_owner;
SELECT idgen.segment_grant('tp', 'draw', 'tp_group');
SET ROLE tp_member;
SELECT idgen.segment_nextval('tp') > 0 AS member_draws;
SET ROLE tp_other;
SELECT idgen.segment_nextval('tp');
\echo :LAST_ERROR_SQLSTATE
-- Leaving the group takes the privilege away
RESET ROLE;
REVOKE tp_group FROM tp_member;
SET ROLE tp_member;
SELECT idgen.segment_nextval('tp');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT tp_group TO tp_member;

-- A revoke inside a transaction holds there, and a rollback undoes it
SET ROLE tp_member;
SELECT idgen.segment_nextval('tp') > 0 AS member_draws_again;
BEGIN;
SET LOCAL ROLE tp_owner;
SELECT idgen.segment_revoke('tp', 'draw', 'tp_group');
SET LOCAL ROLE tp_member;
SAVEPOINT s;
SELECT idgen.segment_nextval('tp');
ROLLBACK TO SAVEPOINT s;
ROLLBACK;
SET ROLE tp_member;
SELECT idgen.segment_nextval('tp') > 0 AS member_draws_after_rollback;

-- read: the tag's row of segment_status and its currval, not drawing
SET ROLE tp_owner;
SELECT idgen.segment_grant('tp', 'read', 'tp_other');
SET ROLE tp_other;
SELECT count(*) AS other_sees_now FROM idgen.segment_status WHERE biz_tag = 'tp';
SELECT idgen.segment_currval('tp') > 0 AS other_reads_currval;
SELECT idgen.segment_nextval('tp');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT biz_tag, privilege, grantee, grantee_id = 'tp_other'::regrole AS by_oid
  FROM idgen.segment_privilege WHERE grantee = 'tp_other';

-- Only the owner (or a member of it, or a superuser) grants and revokes;
-- bad arguments
SET ROLE tp_other;
SELECT idgen.segment_grant('tp', 'draw', 'tp_other');
\echo :LAST_ERROR_SQLSTATE
SET ROLE tp_owner;
SELECT idgen.segment_grant('tp', 'select', 'tp_other');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_grant('tp', 'draw', 'no_such_role');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_grant('tp', 'draw', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_grant('tp', NULL, 'tp_other');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_grant('no_such_tag', 'draw', 'tp_other');
\echo :LAST_ERROR_SQLSTATE
-- a tag that does not exist, by a role that is not a superuser: drawn,
-- 42704; its currval, 55000 (never drawn in this session), as for a
-- superuser
SELECT idgen.segment_nextval('no_such_tag');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_currval('no_such_tag');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- A renamed role keeps its privilege; a role with privileges on a tag is
-- not dropped until DROP OWNED (or a revoke) removes them
ALTER ROLE tp_group RENAME TO tp_group2;
SELECT privilege, grantee FROM idgen.segment_privilege
  WHERE grantee_id = 'tp_group2'::regrole;
SET ROLE tp_member;
SELECT idgen.segment_nextval('tp') > 0 AS member_draws_after_rename;
RESET ROLE;
ALTER ROLE tp_group2 RENAME TO tp_group;
-- A special role specifier is PostgreSQL's to refuse; idgen's hook only
-- looks up roles named by name
DROP ROLE CURRENT_USER;
-- Without its EXECUTE on segment_grant, nothing of PostgreSQL's depends on
-- tp_other: the refusal is idgen's, naming the tag
REVOKE EXECUTE ON FUNCTION idgen.segment_grant(text, text, text) FROM tp_other;
DROP ROLE tp_other;
\echo :LAST_ERROR_SQLSTATE
DROP OWNED BY tp_other;
SELECT count(*) AS other_grants FROM idgen.segment_privilege WHERE grantee = 'tp_other';
DROP ROLE tp_other;

-- A dropped tag takes its privileges with it: the same name created again
-- has the defaults
SET ROLE tp_owner;
SELECT idgen.segment_drop('tp');
RESET ROLE;
SELECT count(*) AS grants_left FROM idgen.segment_privilege WHERE biz_tag = 'tp';
SET ROLE tp_owner;
SELECT idgen.segment_create('tp', 1000000, 10);
SET ROLE tp_member;
SELECT idgen.segment_nextval('tp') >= 1000000 AS member_draws_new_tag;
RESET ROLE;

-- A transaction that changed a tag's privileges cannot be prepared (its
-- change must reach every backend's cache at its end): 0A000, and the
-- grant is rolled back with it
BEGIN;
SELECT idgen.segment_grant('tp', 'read', 'tp_member');
\set VERBOSITY terse
PREPARE TRANSACTION 'idgen_acl';
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT count(*) AS prepared_grant_kept FROM idgen.segment_privilege
  WHERE biz_tag = 'tp' AND grantee = 'tp_member';
SELECT count(*) AS prepared FROM pg_prepared_xacts WHERE gid = 'idgen_acl';
-- A transaction that only drew is not refused by idgen (here PostgreSQL
-- refuses, as prepared transactions are off in this test server)
BEGIN;
SELECT idgen.segment_nextval('tp') > 0 AS drew;
\set VERBOSITY terse
PREPARE TRANSACTION 'idgen_draw';
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- Revoking all from public also hides nothing the owner sees
SET ROLE tp_owner;
SELECT idgen.segment_revoke('tp', 'all', 'public');
SELECT count(*) AS owner_still_sees FROM idgen.segment_status WHERE biz_tag = 'tp';
RESET ROLE;
SELECT public_draw, public_read FROM idgen.segment_alloc WHERE biz_tag = 'tp';
SELECT idgen.segment_drop('tp');

DROP OWNED BY tp_owner, tp_member, tp_group;
DROP ROLE tp_owner, tp_member, tp_group;
