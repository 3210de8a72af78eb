/* idgen--0.3.0--0.4.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '0.4.0'" to load this file. \quit

-- Each change of 0.4.0 has its own section below, headed "-- BEGIN <feature>"
-- and ended by "-- END <feature>", so that parallel work merges cleanly.
-- Every new function, table and view gets a COMMENT (t/095_upgrade.pl checks).
