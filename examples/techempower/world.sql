-- SPDX-License-Identifier: MIT
-- TechEmpower's hello_world database: the World table, 10,000 rows of random numbers 1..10000.
-- Run as a superuser on the database postgres (create-db.sh does).
CREATE USER benchmarkdbuser WITH PASSWORD 'benchmarkdbpass';
CREATE DATABASE hello_world OWNER benchmarkdbuser;
\connect hello_world benchmarkdbuser
CREATE TABLE World (id integer NOT NULL PRIMARY KEY, randomNumber integer NOT NULL DEFAULT 0);
INSERT INTO World (id, randomNumber)
    SELECT n, 1 + floor(random() * 10000)::integer FROM generate_series(1, 10000) AS n;
