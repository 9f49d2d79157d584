-- Hand-written: finer statistics for contacts.search_text, so the plan of q (GET
-- /contacts?q=…) does not flip with the sample ANALYZE happens to draw (issue 8, "Speed").
--
-- PostgreSQL estimates `search_text LIKE '%müll%'` from the column's histogram: the share of
-- its entries that match. search_text is unique per contact, so there are no common values and
-- at the default target (100) the histogram has 101 entries; a term in 1.6% of the rows
-- matches 0 to 3 of them. Five ANALYZE runs on the benchmark's 1,000,000 contacts (15,631
-- Müller) estimated 100, 10,101, 10,101, 20,202 and 30,305 rows. At 100 the admin's q=müll
-- planned a bitmap of all 15,631 matches and a sort (71 ms) instead of walking the
-- created_at index until 51 matches (10 ms, same load). With 1,001 entries the five estimates
-- were 16,016 to 17,017. ANALYZE of contacts reads 300,000 sampled rows instead of 30,000.

-- +goose Up
ALTER TABLE contacts ALTER COLUMN search_text SET STATISTICS 1000;

-- +goose Down
ALTER TABLE contacts ALTER COLUMN search_text SET STATISTICS -1;
