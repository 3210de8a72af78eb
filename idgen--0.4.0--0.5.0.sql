\echo Use "ALTER EXTENSION idgen UPDATE TO '0.5.0'" to load this file. \quit
