-- No JIT for any session of this database (docs/decisions/0021). PostgreSQL compiles a statement with
-- LLVM when its estimated cost passes jit_above_cost; on TimescaleDB the estimates for compressed chunks
-- pass it for statements that read a handful of rows, and the compilation then takes far longer than the
-- statement. No statement of this service gains from it. Set per database rather than in each session's
-- startup packet, which PgBouncer refuses for parameters it does not know.
-- ALTER DATABASE needs the database's owner (or a superuser), as `gwapi migrate` runs.
do $$
begin
  execute format('alter database %I set jit = off', current_database());
end
$$;
