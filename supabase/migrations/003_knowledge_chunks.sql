-- The company's documents, chunked and embedded, for hybrid (full-text + vector) search.
-- Idempotent: the local stack applies every migration at each boot.

create extension if not exists vector;

create table if not exists knowledge_chunks (
  id           bigint generated always as identity primary key,
  document_id  text not null,   -- stable id of the source object (bucket + key)
  source       text not null,   -- name or URL shown to the user
  chunk_index  int not null,
  content      text not null,
  content_hash text generated always as (md5(content)) stored,
  metadata     jsonb not null default '{}'::jsonb,
  embedding    vector(1024) not null,
  fts          tsvector generated always as (to_tsvector('english', content)) stored,
  created_at   timestamptz not null default now(),
  unique (document_id, chunk_index)
);

create index if not exists knowledge_chunks_embedding on knowledge_chunks using hnsw (embedding vector_cosine_ops);
create index if not exists knowledge_chunks_fts on knowledge_chunks using gin (fts);

alter table knowledge_chunks enable row level security;

-- Hybrid search: Supabase's documented hybrid_search pattern, with cosine distance, fused by
-- reciprocal rank. One change: the full-text side ORs the query's lexemes instead of ANDing
-- them (websearch_to_tsquery), because a question rarely has every word in one chunk.
-- full_text_weight = 0 gives vector-only ranking (the benchmark's baseline).
create or replace function match_knowledge(
  query_text       text,
  query_embedding  vector(1024),
  match_count      int default 5,
  full_text_weight float default 1,
  semantic_weight  float default 1,
  rrf_k            int default 50
) returns table (id bigint, document_id text, source text, content text, similarity float)
language sql
stable
set search_path = public, extensions
as $$
  with query as (
    select nullif(array_to_string(array(
             select quote_literal(lexeme) from unnest(to_tsvector('english', query_text))
           ), ' | '), '')::tsquery as q
  ),
  full_text as (
    select k.id, row_number() over (order by ts_rank_cd(k.fts, query.q) desc) as rank_ix
      from knowledge_chunks k, query
     where full_text_weight > 0 and query.q is not null and k.fts @@ query.q
     order by rank_ix
     limit least(match_count, 30) * 2
  ),
  semantic as (
    select k.id, row_number() over (order by k.embedding <=> query_embedding) as rank_ix
      from knowledge_chunks k
     order by rank_ix
     limit least(match_count, 30) * 2
  )
  select k.id, k.document_id, k.source, k.content,
         (coalesce(1.0 / (rrf_k + full_text.rank_ix), 0.0) * full_text_weight
          + coalesce(1.0 / (rrf_k + semantic.rank_ix), 0.0) * semantic_weight)::float as similarity
    from full_text
    full outer join semantic on full_text.id = semantic.id
    join knowledge_chunks k on coalesce(full_text.id, semantic.id) = k.id
   order by similarity desc
   limit least(match_count, 30);
$$;

revoke all on function match_knowledge(text, vector, int, float, float, int) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function match_knowledge(text, vector, int, float, float, int) from anon, authenticated;
  end if;
end;
$$;
