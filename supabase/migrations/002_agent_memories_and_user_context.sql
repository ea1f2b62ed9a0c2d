-- Long-term memory: facts about a user, found again by meaning (pgvector), and the user's
-- plan, usage and preferences. Idempotent: the local stack applies every migration at each boot.
-- The embedding width is Titan Text Embeddings v2's default (1024); EMBEDDING_DIM must match it.

create extension if not exists vector;

create table if not exists agent_memories (
  id                uuid primary key default gen_random_uuid(),
  user_id           text,            -- null: a global memory, visible to every user
  project_id        text,            -- null: not tied to a project
  content           text not null check (length(btrim(content)) between 1 and 4000),
  -- Derived in the database so every adapter dedups the same way: case and spacing do not make a new fact.
  content_hash      text generated always as (md5(lower(regexp_replace(btrim(content), '\s+', ' ', 'g')))) stored,
  category          text,
  tags              text[] not null default '{}',
  metadata          jsonb not null default '{}'::jsonb,
  embedding         vector(1024) not null,
  source_session_id text,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now(),
  superseded_by     uuid references agent_memories (id) on delete set null
);

-- The same fact is stored once per scope, with or without a user or project.
create unique index if not exists agent_memories_scope_hash
  on agent_memories (user_id, project_id, content_hash) nulls not distinct;
create index if not exists agent_memories_embedding
  on agent_memories using hnsw (embedding vector_cosine_ops);
create index if not exists agent_memories_owner_recent
  on agent_memories (user_id, project_id, created_at desc);

alter table agent_memories enable row level security;

create table if not exists user_context (
  user_id     text primary key,
  plan        text,
  usage       jsonb not null default '{}'::jsonb,
  preferences jsonb not null default '{}'::jsonb,
  updated_at  timestamptz not null default now()
);

alter table user_context enable row level security;

-- Stores a memory, or finds the one already stored for the same fact in the same scope.
-- A fact said again after it was superseded becomes current again.
create or replace function insert_memory(
  p_user_id           text,
  p_project_id        text,
  p_content           text,
  p_embedding         vector(1024),
  p_category          text default null,
  p_tags              text[] default '{}',
  p_metadata          jsonb default '{}'::jsonb,
  p_source_session_id text default null
) returns table (id uuid, created boolean)
language plpgsql
set search_path = public, extensions
as $$
begin
  return query
    insert into agent_memories as m (user_id, project_id, content, embedding, category, tags, metadata, source_session_id)
    values (p_user_id, p_project_id, btrim(p_content), p_embedding, p_category, coalesce(p_tags, '{}'), coalesce(p_metadata, '{}'::jsonb), p_source_session_id)
    on conflict (user_id, project_id, content_hash) do update
      set superseded_by = null, updated_at = now()
      where m.superseded_by is not null
    returning m.id, (m.xmax = 0);
  if not found then
    return query
      select m.id, false from agent_memories m
       where m.user_id is not distinct from p_user_id
         and m.project_id is not distinct from p_project_id
         and m.content_hash = md5(lower(regexp_replace(btrim(p_content), '\s+', ' ', 'g')));
  end if;
end;
$$;

-- The memories closest in meaning to a query, for one user:
--   * never another user's (a null filter_user_id sees only global memories), never a superseded one;
--   * in a project: that project's memories plus the user's memories with no project;
--   * match_count rows even under selective filters: pgvector's iterative index scan keeps
--     walking the HNSW graph until enough rows pass the filters.
create or replace function match_memories(
  query_embedding   vector(1024),
  match_count       int default 5,
  filter_user_id    text default null,
  filter_project_id text default null,
  filter_category   text default null,
  filter_tags       text[] default null
) returns table (
  id uuid, content text, category text, tags text[], metadata jsonb, created_at timestamptz, similarity float
)
language plpgsql
stable
set search_path = public, extensions
set hnsw.iterative_scan = relaxed_order
set hnsw.ef_search = 100
as $$
begin
  return query
    with ranked as materialized (
      select m.id, m.content, m.category, m.tags, m.metadata, m.created_at,
             m.embedding <=> query_embedding as distance
        from agent_memories m
       where m.superseded_by is null
         and (m.user_id = filter_user_id or m.user_id is null)
         and (m.project_id is null or m.project_id = filter_project_id)
         and (filter_category is null or m.category = filter_category)
         and (filter_tags is null or m.tags @> filter_tags)
       order by m.embedding <=> query_embedding
       limit least(greatest(match_count, 1), 50)
    )
    -- relaxed_order may return neighbours slightly out of order: sort the few rows again.
    select r.id, r.content, r.category, r.tags, r.metadata, r.created_at, (1 - r.distance)::float
      from ranked r
     order by r.distance;
end;
$$;

revoke all on function insert_memory(text, text, text, vector, text, text[], jsonb, text) from public;
revoke all on function match_memories(vector, int, text, text, text, text[]) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function insert_memory(text, text, text, vector, text, text[], jsonb, text) from anon, authenticated;
    revoke all on function match_memories(vector, int, text, text, text, text[]) from anon, authenticated;
  end if;
end;
$$;
