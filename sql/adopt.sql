--
-- idgen.adopt_column: an existing integer key column moves to idgen in one
-- transaction (issue 21, point 4).  IDs differ from run to run, so they are
-- asserted as booleans (every new ID above the column's old maximum).
-- After each error, :LAST_ERROR_SQLSTATE shows its SQLSTATE.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- The column's type and default, and whether it is an identity
CREATE FUNCTION col_state(t regclass, c name,
    OUT type text, OUT "default" text, OUT identity text)
    LANGUAGE sql AS $$
    SELECT format_type(a.atttypid, a.atttypmod),
           pg_get_expr(d.adbin, d.adrelid),
           a.attidentity::text
      FROM pg_attribute a
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = t AND a.attname = c
$$;

-- Is a layout preset known to this build (presets come and go by version)?
CREATE FUNCTION preset_known(p text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM idgen.id_timestamp(1, p);
    RETURN true;
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN false;
END
$$;

-- The error of adopt_column, its detail left out (it names times)
CREATE FUNCTION adopt_error(t regclass, c name, g text DEFAULT 'snowflake',
    OUT code text, OUT message text, OUT hint text)
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM idgen.adopt_column(t, c, g);
    code := 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE,
                            message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
END
$$;

-- For PUBLIC (the caller needs the table owner's privileges); its body not
SELECT has_function_privilege('public', 'idgen.adopt_column(regclass, name, text)',
                              'EXECUTE') AS public_may_execute,
       has_function_privilege('public', 'idgen.adopt_column_body(regclass, name, text)',
                              'EXECUTE') AS public_may_execute_body;

--
-- 1. serial (int4) key with referencing tables: a plain foreign key, a
-- self-reference, a two-column key (only the matching column widens), a
-- one-to-one table and the table referencing it (transitively), a
-- partitioned child; child's own key (grandchild references it) stays int
--
CREATE TABLE parent (id serial PRIMARY KEY, kind int NOT NULL DEFAULT 1,
                     up int REFERENCES parent (id), name text,
                     UNIQUE (kind, id));
CREATE TABLE child (id serial PRIMARY KEY, parent_id int REFERENCES parent (id),
                    kind int, parent_id2 int, note text,
                    FOREIGN KEY (kind, parent_id2) REFERENCES parent (kind, id));
CREATE TABLE grandchild (child_id int REFERENCES child (id));
CREATE TABLE profile (parent_id int PRIMARY KEY REFERENCES parent (id));
CREATE TABLE profile_note (profile_id int REFERENCES profile (parent_id));
CREATE TABLE pchild (region text, parent_id int REFERENCES parent (id))
    PARTITION BY LIST (region);
CREATE TABLE pchild_eu PARTITION OF pchild FOR VALUES IN ('eu');
CREATE TABLE pchild_us PARTITION OF pchild FOR VALUES IN ('us');
INSERT INTO parent (name) SELECT 'p' || n FROM generate_series(1, 5) n;
UPDATE parent SET up = 1 WHERE id > 1;
INSERT INTO child (parent_id, kind, parent_id2, note)
    SELECT n, 1, n, 'c' FROM generate_series(1, 5) n;
INSERT INTO grandchild VALUES (1), (2);
INSERT INTO profile VALUES (1), (2);
INSERT INTO profile_note VALUES (1);
INSERT INTO pchild VALUES ('eu', 1), ('us', 2);
SELECT max(id) AS old_max FROM parent \gset
SELECT idgen.adopt_column('parent', 'id');
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relname IN ('parent', 'child', 'grandchild', 'profile', 'profile_note',
                     'pchild', 'pchild_eu', 'pchild_us')
   AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid <> 'text'::regtype
 ORDER BY 1, 2;
SELECT * FROM col_state('parent', 'id');
-- The serial's sequence was dropped with its default
SELECT to_regclass('parent_id_seq') IS NULL AS sequence_dropped;
-- Every constraint is still there (NOT NULL constraints, which 18 and
-- later list in pg_constraint too, are the columns' own)
SELECT conrelid::regclass AS tbl, conname, pg_get_constraintdef(oid) AS def
  FROM pg_constraint
 WHERE conrelid IN ('parent'::regclass, 'child'::regclass, 'grandchild'::regclass,
                    'profile'::regclass, 'profile_note'::regclass, 'pchild'::regclass)
   AND contype <> 'n'
 ORDER BY 1, 2;
-- New rows get snowflake IDs above the old maximum; the keys still hold
INSERT INTO parent (name) VALUES ('new1'), ('new2');
SELECT count(*) AS new_rows, min(id) > :old_max AS above_old_max,
       bool_and(id <= idgen.snowflake_currval()) AS drawn_by_snowflake
  FROM parent WHERE name LIKE 'new%';
INSERT INTO child (parent_id, kind, parent_id2, note)
    SELECT id, 1, id, 'big' FROM parent WHERE name = 'new1';
INSERT INTO pchild SELECT 'eu', id FROM parent WHERE name = 'new2';
SELECT count(*) AS children_of_new_rows
  FROM child JOIN parent p ON p.id = child.parent_id AND p.id = child.parent_id2
 WHERE p.name LIKE 'new%';
INSERT INTO child (parent_id, note) VALUES (1000000000000, 'orphan');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO pchild VALUES ('us', 1000000000000);
\echo :LAST_ERROR_SQLSTATE
-- Adopting it again changes nothing but the default (already the same)
SELECT idgen.adopt_column('parent', 'id');
SELECT * FROM col_state('parent', 'id');

--
-- 2. Identity columns: ALWAYS (int4) and BY DEFAULT (bigint); the identity
-- and its sequence go
--
CREATE TABLE ident_always (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text);
INSERT INTO ident_always (v) VALUES ('a'), ('b'), ('c');
SELECT max(id) AS old_max FROM ident_always \gset
SELECT idgen.adopt_column('ident_always', 'id');
SELECT * FROM col_state('ident_always', 'id');
SELECT count(*) AS sequences_left FROM pg_class
 WHERE relkind = 'S' AND relname LIKE 'ident_always%';
INSERT INTO ident_always (v) VALUES ('d'), ('e');
SELECT count(*) AS new_rows, min(id) > :old_max AS above_old_max
  FROM ident_always WHERE v IN ('d', 'e');
-- ALWAYS is gone: an explicit value is taken
INSERT INTO ident_always (id, v) VALUES (10, 'explicit');

CREATE TABLE ident_default (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, v text);
INSERT INTO ident_default (v) SELECT 'old' FROM generate_series(1, 4);
INSERT INTO ident_default (id, v) VALUES (1000, 'old');
SELECT max(id) AS old_max FROM ident_default \gset
SELECT idgen.adopt_column('ident_default', 'id');
SELECT * FROM col_state('ident_default', 'id');
SELECT count(*) AS sequences_left FROM pg_class
 WHERE relkind = 'S' AND relname LIKE 'ident_default%';
INSERT INTO ident_default (v) VALUES ('new'), ('new');
SELECT count(*) AS new_rows, min(id) > :old_max AS above_old_max
  FROM ident_default WHERE v = 'new';

--
-- 3. bigserial whose largest value lies 2 s ahead of the clock (IDs made by
-- another node of the same layout, say): the generator is advanced above it
--
CREATE TABLE big (id bigserial PRIMARY KEY, v text);
INSERT INTO big (v) VALUES ('small');
SELECT setval('big_id_seq',
              idgen.id_make(clock_timestamp() + interval '2 s', 1023, 4000)) > 0 AS set;
INSERT INTO big (v) VALUES ('ahead'), ('ahead');
SELECT max(id) AS old_max FROM big \gset
SELECT idgen.adopt_column('big', 'id');
SELECT * FROM col_state('big', 'id');
SELECT to_regclass('big_id_seq') IS NULL AS sequence_dropped;
INSERT INTO big (v) SELECT 'new' FROM generate_series(1, 100);
SELECT count(*) AS new_rows, min(id) > :old_max AS above_old_max
  FROM big WHERE v = 'new';
SELECT idgen.snowflake_nextval() > :old_max AS generator_above_old_max;

--
-- 4. Segment tags: a new one starts above the maximum; an existing one is
-- moved past both the maximum and its own max_id, discarding the IDs it had
-- buffered (here 2 to 1000, which the column holds)
--
CREATE TABLE seg_new (id serial PRIMARY KEY, v text);
INSERT INTO seg_new (v) SELECT 'old' FROM generate_series(1, 10);
SELECT idgen.adopt_column('seg_new', 'id', 'segment:adopt_new');
SELECT * FROM col_state('seg_new', 'id');
SELECT biz_tag, max_id FROM idgen.segment_alloc WHERE biz_tag = 'adopt_new';
INSERT INTO seg_new (v) VALUES ('new'), ('new');
SELECT array_agg(id ORDER BY id) AS new_ids FROM seg_new WHERE v = 'new';

SELECT idgen.segment_create('adopt_low', start => 1);
SELECT idgen.segment_nextval('adopt_low') AS drawn_before;
CREATE TABLE seg_low (id int PRIMARY KEY, v text);
INSERT INTO seg_low SELECT n, 'old' FROM generate_series(1, 1000) n;
SELECT idgen.adopt_column('seg_low', 'id', 'segment:adopt_low');
SELECT * FROM col_state('seg_low', 'id');
SELECT max_id > 1000 AS tag_above_old_max FROM idgen.segment_alloc
 WHERE biz_tag = 'adopt_low';
INSERT INTO seg_low (v) VALUES ('new');
SELECT id > 1000 AS above_old_max FROM seg_low WHERE v = 'new';

SELECT idgen.segment_create('adopt_high', start => 5000);
CREATE TABLE seg_high (id bigint PRIMARY KEY, v text);
INSERT INTO seg_high VALUES (10, 'old');
SELECT idgen.adopt_column('seg_high', 'id', 'segment:adopt_high');
SELECT biz_tag, max_id FROM idgen.segment_alloc WHERE biz_tag = 'adopt_high';
INSERT INTO seg_high (v) VALUES ('new');
SELECT id AS new_id FROM seg_high WHERE v = 'new';

-- A tag dropped above the column's maximum: created again above the IDs
-- it had allocated (its tombstone), not refused
SELECT idgen.segment_create('adopt_dropped', start => 5000);
SELECT idgen.segment_nextval('adopt_dropped') AS drawn \gset
SELECT idgen.segment_drop('adopt_dropped');
CREATE TABLE seg_dropped (id int PRIMARY KEY, v text);
INSERT INTO seg_dropped VALUES (10, 'old');
SELECT idgen.adopt_column('seg_dropped', 'id', 'segment:adopt_dropped');
SELECT * FROM col_state('seg_dropped', 'id');
INSERT INTO seg_dropped (v) VALUES ('new');
SELECT id > :drawn AS above_dropped_tag FROM seg_dropped WHERE v = 'new';
-- The same for a tag kept when the extension was dropped (its floor in
-- idgen.segment_floor, as CREATE EXTENSION reads it back)
INSERT INTO idgen.segment_floor VALUES ('adopt_kept', 7000);
CREATE TABLE seg_kept (id int PRIMARY KEY, v text);
INSERT INTO seg_kept VALUES (10, 'old');
SELECT idgen.adopt_column('seg_kept', 'id', 'segment:adopt_kept');
SELECT biz_tag, max_id FROM idgen.segment_alloc WHERE biz_tag = 'adopt_kept';
INSERT INTO seg_kept (v) VALUES ('new');
SELECT id AS new_id FROM seg_kept WHERE v = 'new';
DELETE FROM idgen.segment_floor WHERE biz_tag = 'adopt_kept';

-- An empty table: a new tag starts at 1
CREATE TABLE seg_empty (id smallserial PRIMARY KEY);
SELECT idgen.adopt_column('seg_empty', 'id', 'segment:adopt_empty');
SELECT * FROM col_state('seg_empty', 'id');
SELECT biz_tag, max_id FROM idgen.segment_alloc WHERE biz_tag = 'adopt_empty';

--
-- 5. A sequence the column does not own, or that other columns use, is
-- kept (with a NOTICE); only what the column owned alone is dropped
--
CREATE TABLE shared_a (id serial PRIMARY KEY);
CREATE TABLE shared_b (id int PRIMARY KEY DEFAULT nextval('shared_a_id_seq'));
SELECT idgen.adopt_column('shared_a', 'id');
SELECT to_regclass('shared_a_id_seq') IS NOT NULL AS kept,
       NOT EXISTS (SELECT FROM pg_depend WHERE objid = 'shared_a_id_seq'::regclass
                   AND deptype = 'a') AS not_owned;
SELECT idgen.adopt_column('shared_b', 'id', 'segment:adopt_shared_b');
SELECT * FROM col_state('shared_b', 'id');
SELECT to_regclass('shared_a_id_seq') IS NOT NULL AS still_kept;

--
-- 6. Identifiers and tags are quoted, never run as SQL
--
CREATE TABLE "adopt ""x""; DROP TABLE parent; --" ("a""); DROP TABLE parent; --" serial);
SELECT idgen.adopt_column('"adopt ""x""; DROP TABLE parent; --"',
                          'a"); DROP TABLE parent; --',
                          'segment:t''); DROP TABLE parent; --');
SELECT type, "default" FROM col_state('"adopt ""x""; DROP TABLE parent; --"',
                                      'a"); DROP TABLE parent; --');
SELECT to_regclass('parent') IS NOT NULL AS parent_still_there;
INSERT INTO "adopt ""x""; DROP TABLE parent; --" DEFAULT VALUES RETURNING *;

--
-- 7. Errors
--
-- unknown column
SELECT idgen.adopt_column('parent', 'nosuch');
\echo :LAST_ERROR_SQLSTATE
-- system column
SELECT idgen.adopt_column('parent', 'ctid');
\echo :LAST_ERROR_SQLSTATE
-- not an integer type
CREATE TABLE notint (id numeric PRIMARY KEY, u uuid, t text);
SELECT idgen.adopt_column('notint', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column('notint', 't', 'segment:x');
\echo :LAST_ERROR_SQLSTATE
-- not a generator
SELECT idgen.adopt_column('parent', 'id', 'uuid');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column('parent', 'id', 'segment:');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column('parent', 'id', 'Snowflake');
\echo :LAST_ERROR_SQLSTATE
-- NULL arguments
SELECT idgen.adopt_column(NULL, 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column('parent', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column('parent', 'id', NULL);
\echo :LAST_ERROR_SQLSTATE
-- not a table
CREATE VIEW parent_view AS SELECT id FROM parent;
SELECT idgen.adopt_column('parent_view', 'id');
\echo :LAST_ERROR_SQLSTATE
-- a tag name too long (segment_create's error, nothing changed)
CREATE TABLE long_tag (id int PRIMARY KEY);
SELECT idgen.adopt_column('long_tag', 'id', 'segment:' || repeat('x', 129));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM col_state('long_tag', 'id');
-- a column whose largest value is the largest bigint: no ID is above it
-- (2200H, for either generator), nothing changed
CREATE TABLE at_top (id bigserial PRIMARY KEY, v text);
INSERT INTO at_top VALUES (9223372036854775807, 'old');
SELECT idgen.adopt_column('at_top', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column('at_top', 'id', 'segment:adopt_top');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM col_state('at_top', 'id');
SELECT to_regclass('at_top_id_seq') IS NOT NULL AS sequence_kept,
       NOT EXISTS (SELECT FROM idgen.segment_alloc WHERE biz_tag = 'adopt_top') AS no_tag;
-- a tag that has allocated every bigint (2200H), nothing changed
SELECT idgen.segment_create('adopt_full', 9223372036854775800, 100);
SELECT idgen.segment_nextval('adopt_full') AS first_of_full;
CREATE TABLE to_full (id serial PRIMARY KEY);
INSERT INTO to_full DEFAULT VALUES;
SELECT idgen.adopt_column('to_full', 'id', 'segment:adopt_full');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM col_state('to_full', 'id');
SELECT idgen.segment_drop('adopt_full');

--
-- 8. Privileges (issue 30, points 1 and 2): EXECUTE for PUBLIC; the caller
-- needs the privileges of the table's owner, and the work runs as that
-- owner, who adopts for snowflake IDs without a superuser and for a segment
-- tag given EXECUTE on the tag functions.  adopt_column_body is not for
-- PUBLIC, and refuses to run as anyone but the owner.
--
CREATE ROLE adopt_owner;
CREATE ROLE adopt_other;
CREATE TABLE owned (id serial PRIMARY KEY, v text);
INSERT INTO owned (v) VALUES ('old'), ('old');
ALTER TABLE owned OWNER TO adopt_owner;
SET ROLE adopt_other;
SELECT idgen.adopt_column('owned', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_column_body('owned', 'id', 'snowflake');
\echo :LAST_ERROR_SQLSTATE
SET ROLE adopt_owner;
SELECT idgen.adopt_column('owned', 'id', 'segment:adopt_owned');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT idgen.adopt_column_body('owned', 'id', 'snowflake');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM col_state('owned', 'id');
SET ROLE adopt_owner;
SELECT idgen.adopt_column('owned', 'id');
INSERT INTO owned (v) VALUES ('new');
SELECT count(*) AS new_above_old FROM owned WHERE v = 'new' AND id > 2;
RESET ROLE;
SELECT * FROM col_state('owned', 'id');
SELECT to_regclass('owned_id_seq') IS NULL AS sequence_dropped;
-- Beyond idgen.max_lead: refused to the owner, the hint names the
-- superuser's call
CREATE TABLE owned_ahead (id bigint PRIMARY KEY);
INSERT INTO owned_ahead VALUES (idgen.id_make(now() + interval '1 hour', 1, 1));
ALTER TABLE owned_ahead OWNER TO adopt_owner;
SET ROLE adopt_owner;
SELECT code, message, hint ~ '^IDs above it are further ahead of the clock than idgen\.max_lead allows\.  Have a superuser run ALTER SYSTEM SET idgen\.max_lead = ''[0-9]+ ms''; SELECT pg_reload_conf\(\); then call adopt_column again'
       AS hint_names_call
  FROM adopt_error('owned_ahead', 'id');
-- adopt_snowflake_advance is adopt_column's step alone (issue 37, point
-- 7): called directly, by the owner or anyone else, it moves nothing
SELECT idgen.adopt_snowflake_advance('owned_ahead', (SELECT max(id) FROM owned_ahead));
\echo :LAST_ERROR_SQLSTATE
SET ROLE adopt_other;
SELECT idgen.adopt_snowflake_advance('owned_ahead', 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT * FROM col_state('owned_ahead', 'id');
-- A segment tag, given EXECUTE on the tag functions
CREATE TABLE owned_seg (id serial PRIMARY KEY, v text);
INSERT INTO owned_seg (v) VALUES ('old'), ('old');
ALTER TABLE owned_seg OWNER TO adopt_owner;
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int),
    idgen.segment_export_leaf(text, boolean) TO adopt_owner;
SET ROLE adopt_owner;
SELECT idgen.adopt_column('owned_seg', 'id', 'segment:adopt_owned');
INSERT INTO owned_seg (v) VALUES ('new');
SELECT id, v FROM owned_seg ORDER BY id;
RESET ROLE;
SELECT * FROM col_state('owned_seg', 'id');
SELECT owner AS tag_owner FROM idgen.segment_alloc WHERE biz_tag = 'adopt_owned';
-- A referencing table of another owner is not rewritten with this owner's
-- rights: refused, nothing changed
CREATE TABLE owned_p (id serial PRIMARY KEY);
CREATE TABLE other_ref (pid int REFERENCES owned_p (id));
ALTER TABLE owned_p OWNER TO adopt_owner;
ALTER TABLE other_ref OWNER TO adopt_other;
SELECT * FROM adopt_error('owned_p', 'id');
SELECT * FROM col_state('owned_p', 'id');
SELECT * FROM col_state('other_ref', 'pid');
DROP TABLE owned, owned_ahead, owned_seg, other_ref, owned_p;
SELECT idgen.segment_drop('adopt_owned');
DROP OWNED BY adopt_owner, adopt_other;
DROP ROLE adopt_owner, adopt_other;

--
-- 8b. A superuser adopting another role's table runs none of its code with
-- a superuser's rights (issue 30, point 2): mallory's CHECK on the table
-- and on a referencing table would make mallory a superuser if it ran as
-- one; it runs as mallory, the adoption goes through, mallory stays
-- without rolsuper
--
CREATE ROLE mallory;
CREATE FUNCTION public.chk(bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE TABLE mal (id serial PRIMARY KEY CHECK (public.chk(id)), v text);
CREATE TABLE mal_ref (id serial PRIMARY KEY,
                      mid int REFERENCES mal (id) CHECK (public.chk(mid)));
INSERT INTO mal (v) SELECT 'old' FROM generate_series(1, 3);
INSERT INTO mal_ref (mid) VALUES (1), (3);
CREATE OR REPLACE FUNCTION public.chk(bigint) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER ROLE mallory SUPERUSER;
    END IF;
    RETURN true;
END
$$;
ALTER FUNCTION public.chk(bigint) OWNER TO mallory;
ALTER TABLE mal OWNER TO mallory;
ALTER TABLE mal_ref OWNER TO mallory;
SELECT idgen.adopt_column('mal', 'id');
SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory';
SELECT * FROM col_state('mal', 'id');
SELECT * FROM col_state('mal_ref', 'mid');
INSERT INTO mal (v) VALUES ('new');
SELECT count(*) AS new_above_old FROM mal WHERE v = 'new' AND id > 3;
DROP TABLE mal_ref, mal;
DROP FUNCTION public.chk(bigint);
DROP ROLE mallory;

--
-- 9. IDs another layout made, which idgen's layout puts far ahead of the
-- clock: refused, nothing changed, the preset that continues them named
--
-- Twitter's snowflake, a day ago: under idgen's layout, 16 years ahead
CREATE TABLE from_twitter (id bigserial PRIMARY KEY);
INSERT INTO from_twitter
    VALUES (idgen.id_make(now() - interval '1 day', 1, 7, 'twitter'));
SELECT * FROM adopt_error('from_twitter', 'id');
SELECT * FROM col_state('from_twitter', 'id');
SELECT to_regclass('from_twitter_id_seq') IS NOT NULL AS sequence_kept;
-- pgEdge's snowflake (its epoch 2023-01-01), a day ago: a year ahead.  The
-- empty int4 table referencing it is not widened either
CREATE TABLE from_pgedge (id bigserial PRIMARY KEY, v text);
CREATE TABLE from_pgedge_ref (pid int REFERENCES from_pgedge (id));
INSERT INTO from_pgedge VALUES
    (idgen.id_make(now() - interval '1 day', 1, 7,
                   'ts=41,node=10,seq=12,unit=1ms,epoch=2023-01-01'), 'old');
SELECT max(id) AS old_max FROM from_pgedge \gset
\set VERBOSITY terse
SELECT idgen.adopt_column('from_pgedge', 'id');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT code, message,
       (hint LIKE '%preset "pgedge"%') = preset_known('pgedge') AS hint_names_pgedge_if_known
  FROM adopt_error('from_pgedge', 'id');
SELECT * FROM col_state('from_pgedge', 'id');
SELECT * FROM col_state('from_pgedge_ref', 'pid');
SELECT to_regclass('from_pgedge_id_seq') IS NOT NULL AS sequence_kept;
-- The same IDs go to a segment tag above them
SELECT idgen.adopt_column('from_pgedge', 'id', 'segment:adopt_pgedge');
SELECT * FROM col_state('from_pgedge', 'id');
SELECT * FROM col_state('from_pgedge_ref', 'pid');
INSERT INTO from_pgedge (v) VALUES ('new');
SELECT id = :old_max + 1 AS next_above_old_max FROM from_pgedge WHERE v = 'new';

--
-- 10. Partitions (issue 30, point 4): a partitioned table is adopted with
-- the maximum of every partition; a partition alone is refused with a hint
-- naming its root; inserts through the parent and into a partition repeat
-- no ID
--
CREATE TABLE pt (id serial, k int NOT NULL, PRIMARY KEY (id, k)) PARTITION BY LIST (k);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES IN (1);
CREATE TABLE pt2 PARTITION OF pt FOR VALUES IN (2);
INSERT INTO pt (k) SELECT 1 FROM generate_series(1, 5);
INSERT INTO pt2 VALUES (1000, 2);
SELECT * FROM adopt_error('pt1', 'id', 'segment:adopt_pt1');
SELECT idgen.adopt_column('pt', 'id', 'segment:adopt_pt');
SELECT * FROM adopt_error('pt1', 'id', 'segment:adopt_pt1');
SELECT * FROM col_state('pt1', 'id');
INSERT INTO pt (k) SELECT 1 FROM generate_series(1, 50);
INSERT INTO pt1 (k) SELECT 1 FROM generate_series(1, 50);
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       count(*) FILTER (WHERE id > 1000) AS new_above_1000
  FROM pt;
DROP TABLE pt;
SELECT idgen.segment_drop('adopt_pt');

--
-- 11. A sequence shared by two tables (issue 30, point 4): the adopted
-- column (largest value 10) continues above the sequence's last value (20),
-- with a NOTICE; no ID repeats across the two tables
--
CREATE SEQUENCE shared_seq;
CREATE TABLE sa (id int PRIMARY KEY DEFAULT nextval('shared_seq'), v text);
CREATE TABLE sb (id int PRIMARY KEY DEFAULT nextval('shared_seq'), v text);
INSERT INTO sa (v) SELECT 'old' FROM generate_series(1, 10);
INSERT INTO sb (v) SELECT 'old' FROM generate_series(1, 10);
SELECT idgen.adopt_column('sa', 'id', 'segment:adopt_shared');
SELECT * FROM col_state('sa', 'id');
INSERT INTO sa (v) SELECT 'new' FROM generate_series(1, 20);
SELECT min(id) AS first_new FROM sa WHERE v = 'new';
-- The sequence is stopped (issue 37, point 2): sb's next row fails rather
-- than take an ID the tag will give sa too; so does any nextval() on it
INSERT INTO sb (v) VALUES ('new');
\echo :LAST_ERROR_SQLSTATE
SELECT nextval('shared_seq');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO sa (v) SELECT 'new' FROM generate_series(1, 20);
SELECT count(*) AS repeated FROM sa JOIN sb USING (id);
DROP TABLE sa, sb;
DROP SEQUENCE shared_seq;
SELECT idgen.segment_drop('adopt_shared');

--
-- 12. Inheritance (issue 37, point 2): a child is refused as a partition
-- is, also after its parent was adopted; the parent covers the whole tree
-- at any depth, rows routed by a trigger and rows inserted straight into
-- the children repeat no ID
--
CREATE TABLE ip (id serial PRIMARY KEY, v text);
CREATE TABLE ip1 () INHERITS (ip);
CREATE TABLE ip11 () INHERITS (ip1);
CREATE FUNCTION ip_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ip1 VALUES (NEW.*);
    RETURN NULL;
END
$$;
CREATE TRIGGER ip_route BEFORE INSERT ON ip FOR EACH ROW EXECUTE FUNCTION ip_route();
INSERT INTO ip (v) SELECT 'old' FROM generate_series(1, 10);
INSERT INTO ip11 (v) SELECT 'old' FROM generate_series(1, 10);
SELECT * FROM adopt_error('ip11', 'id', 'segment:adopt_ip');
SELECT idgen.adopt_column('ip', 'id', 'segment:adopt_ip');
SELECT * FROM adopt_error('ip1', 'id', 'segment:adopt_ip1');
SELECT c.relname, (col_state(c.oid, 'id')).*
  FROM pg_class c WHERE c.relname IN ('ip', 'ip1', 'ip11') ORDER BY 1;
INSERT INTO ip (v) SELECT 'new' FROM generate_series(1, 100);
INSERT INTO ip1 (v) SELECT 'new' FROM generate_series(1, 100);
INSERT INTO ip11 (v) SELECT 'new' FROM generate_series(1, 100);
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       count(*) FILTER (WHERE v = 'new' AND id <= 20) AS new_at_or_below_old
  FROM ip;
DROP TABLE ip CASCADE;
DROP FUNCTION ip_route();
SELECT idgen.segment_drop('adopt_ip');

--
-- 13. FORCE ROW LEVEL SECURITY (issue 37, point 2): the owner's policy
-- would hide rows from the maximum; refused (42501), nothing changed.
-- Without FORCE the owner reads every row and the adoption goes through.
--
CREATE TABLE rls (id bigserial PRIMARY KEY, v text);
INSERT INTO rls (v) SELECT 'seen' FROM generate_series(1, 5);
INSERT INTO rls (v) SELECT 'old' FROM generate_series(1, 45);
CREATE POLICY only_seen ON rls USING (v <> 'old');
ALTER TABLE rls ENABLE ROW LEVEL SECURITY;
ALTER TABLE rls FORCE ROW LEVEL SECURITY;
CREATE ROLE adopt_rls_owner;
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int),
    idgen.segment_export_leaf(text, boolean) TO adopt_rls_owner;
ALTER TABLE rls OWNER TO adopt_rls_owner;
SET ROLE adopt_rls_owner;
SELECT count(*) AS rows_the_owner_sees FROM rls;
SELECT * FROM adopt_error('rls', 'id', 'segment:adopt_rls');
RESET ROLE;
SELECT * FROM col_state('rls', 'id');
ALTER TABLE rls NO FORCE ROW LEVEL SECURITY;
SET ROLE adopt_rls_owner;
SELECT idgen.adopt_column('rls', 'id', 'segment:adopt_rls');
INSERT INTO rls (v) SELECT 'new' FROM generate_series(1, 10);
RESET ROLE;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       min(id) FILTER (WHERE v = 'new') AS first_new FROM rls;
DROP TABLE rls;
SELECT idgen.segment_drop('adopt_rls');
REVOKE EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int),
    idgen.segment_export_leaf(text, boolean) FROM adopt_rls_owner;
DROP ROLE adopt_rls_owner;

--
-- 14. The steps of adopt_column refuse to run outside it (issue 37, point 9)
--
CREATE TABLE steps (id serial PRIMARY KEY);
SELECT idgen.adopt_target('steps', 'id', 'snowflake');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_switch('steps', 'id', 1::smallint, '', '{}', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.adopt_stop_sequence('steps', 'id', 'steps_id_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM col_state('steps', 'id');
-- Every step, with a null table or other null arguments too, called by the
-- owner of a sequence: each refuses (42501, the step's own message), and the
-- sequence is not stopped
CREATE ROLE adopt_stranger;
CREATE SEQUENCE stranger_seq;
ALTER SEQUENCE stranger_seq OWNER TO adopt_stranger;
SET ROLE adopt_stranger;
DO $$
DECLARE
    c text;
BEGIN
    FOREACH c IN ARRAY ARRAY[
        'adopt_step(NULL, true)', 'adopt_step(''steps'', NULL)',
        'adopt_snowflake_advance(NULL, 9000000000000000000)',
        'adopt_snowflake_advance(''steps'', NULL)',
        'adopt_target(NULL, ''id'', ''snowflake'')',
        'adopt_tree(NULL)', 'adopt_tree(''steps'')',
        'adopt_relations(NULL, 1::smallint)', 'adopt_relations(''steps'', 1::smallint)',
        'adopt_sequences(NULL, ''id'')', 'adopt_sequences(''steps'', ''id'')',
        'adopt_check_owners(NULL, ''id'', 1::smallint, ''{stranger_seq}'')',
        'adopt_floor(NULL, ''id'', ''{stranger_seq}'')',
        'adopt_snowflake(NULL, ''id'', 9000000000000000000)',
        'adopt_segment(NULL, ''id'', ''stranger_tag'', 5)',
        'adopt_stop_sequence(NULL, ''id'', ''stranger_seq'')',
        'adopt_stop_sequence(NULL, NULL, ''stranger_seq'')',
        'adopt_widen(NULL, 1::smallint)',
        'adopt_switch(NULL, ''id'', 1::smallint, '''', ''{stranger_seq}'', NULL)'] LOOP
        BEGIN
            EXECUTE 'SELECT idgen.' || c;
            RAISE NOTICE '%: ran', c;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE '%: % %', c, SQLSTATE, SQLERRM;
        END;
    END LOOP;
END
$$;
SELECT nextval('stranger_seq') AS not_stopped;
RESET ROLE;
SELECT seqmax = 9223372036854775807 AS maxvalue_kept FROM pg_sequence
 WHERE seqrelid = 'stranger_seq'::regclass;
SELECT count(*) AS no_tag FROM idgen.segment_alloc WHERE biz_tag = 'stranger_tag';
DROP SEQUENCE stranger_seq;
DROP ROLE adopt_stranger;
DROP TABLE steps;

--
-- 15. An INSERT in the transaction that adopted the column for a segment
-- tag: the idgen worker allocates from committed rows only, so a tag the
-- call created is unknown there (42704) and one it raised has its row
-- locked (55000 after idgen.segment_wait_timeout); after the commit the
-- INSERT works.  A snowflake adoption draws at once.
--
CREATE TABLE same_xact (id serial PRIMARY KEY, v text);
INSERT INTO same_xact (v) VALUES ('a');
BEGIN;
SELECT idgen.adopt_column('same_xact', 'id', 'segment:same_xact');
INSERT INTO same_xact (v) VALUES ('b');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT idgen.segment_create('same_xact_raised');
BEGIN;
SET LOCAL idgen.segment_wait_timeout = '200ms';
SELECT idgen.adopt_column('same_xact', 'id', 'segment:same_xact_raised');
INSERT INTO same_xact (v) VALUES ('b');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT idgen.adopt_column('same_xact', 'id', 'segment:same_xact_raised');
INSERT INTO same_xact (v) VALUES ('b') RETURNING id > 1 AS above_the_old_ids;
DROP TABLE same_xact;
CREATE TABLE same_xact (id serial PRIMARY KEY, v text);
BEGIN;
SELECT idgen.adopt_column('same_xact', 'id');
INSERT INTO same_xact (v) VALUES ('b') RETURNING id > 1 AS snowflake_at_once;
COMMIT;
DROP TABLE same_xact;
SELECT idgen.segment_drop('same_xact_raised');
