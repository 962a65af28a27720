-- The runs of measurement_changes that an import lists for the rows it gave another value, marked, so
-- that a delta of this release leaves them out (corrections are read from measurement_corrections)
-- while the release before, which reads every run, still finds them (decision 0107). 1.3.1's text of
-- 009 added it beside 009's other changes, whose text now ends without it: the same end state, with this
-- (decision 0116). A constant default rewrites no row: ACCESS EXCLUSIVE on the log, an instant.
alter table measurement_changes add column if not exists corrected boolean not null default false;
