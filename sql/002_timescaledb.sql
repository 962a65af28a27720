-- Where TimescaleDB can be loaded, measurements becomes a hypertable partitioned by observed_at.
-- Elsewhere this migration does nothing and the plain table of 001 serves the same queries.
--
-- Chunk interval 30 days: a year-long series touches 13 chunks and a month 1 or 2, so planning stays
-- cheap, while a chunk of a large network (10,000 tubes at 15-minute data: ~29 M rows, ~1.5 GB with
-- its index) still fits comfortably in memory while it is being written.
--
-- Compression segmented by tube and ordered by time stores each tube's series as contiguous
-- compressed batches, which is exactly the read pattern of the measurements endpoint.
-- Chunks are compressed once older than 180 days: groundwater loggers are often read out only every
-- few months, so late imports and corrections land in uncompressed chunks almost always (they still
-- work on compressed ones, just slower).
do $$
begin
  begin
    create extension if not exists timescaledb;
  exception when others then
    raise notice 'timescaledb not available (%): measurements stays a plain table', sqlerrm;
    return;
  end;

  perform create_hypertable('measurements', by_range('observed_at', interval '30 days'),
                            if_not_exists => true, migrate_data => true);
  alter table measurements set (
    timescaledb.compress,
    timescaledb.compress_segmentby = 'tube_id',
    timescaledb.compress_orderby = 'observed_at'
  );
  perform add_compression_policy('measurements', interval '180 days', if_not_exists => true);
end
$$;
