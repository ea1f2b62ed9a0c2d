-- match_memories, also for the store API's search by meaning (graph/agent-server/store.ts), whose
-- namespaces are a user's memories per project: it now says each memory's project, and
-- project_scope says which projects it looks in:
--   'recall' (the default, as before): the project's memories plus the user's with no project,
--            what the agent recalls in a project's chat;
--   'exact':  the project's alone (with no project: the user's with no project alone);
--   'all':    every project's and none.
-- The scope narrows before the rows are ranked and cut to match_count, so a search never comes
-- back short for memories it would drop. A function's result columns cannot be changed in place:
-- the old one is dropped and made anew.
drop function if exists match_memories(vector, int, text, text, text, text[]);

create or replace function match_memories(
  query_embedding   vector(1024),
  match_count       int default 5,
  filter_user_id    text default null,
  filter_project_id text default null,
  filter_category   text default null,
  filter_tags       text[] default null,
  project_scope     text default 'recall'
) returns table (
  id uuid, content text, category text, tags text[], metadata jsonb, created_at timestamptz, similarity float,
  project_id text
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
      select m.id, m.content, m.category, m.tags, m.metadata, m.created_at, m.project_id,
             m.embedding <=> query_embedding as distance
        from agent_memories m
       where m.superseded_by is null
         and (m.user_id = filter_user_id or m.user_id is null)
         and case project_scope
               when 'all' then true
               when 'exact' then m.project_id is not distinct from filter_project_id
               else m.project_id is null or m.project_id = filter_project_id
             end
         and (filter_category is null or m.category = filter_category)
         and (filter_tags is null or m.tags @> filter_tags)
       order by m.embedding <=> query_embedding
       limit least(greatest(match_count, 1), 50)
    )
    -- relaxed_order may return neighbours slightly out of order: sort the few rows again.
    select r.id, r.content, r.category, r.tags, r.metadata, r.created_at, (1 - r.distance)::float, r.project_id
      from ranked r
     order by r.distance;
end;
$$;

revoke all on function match_memories(vector, int, text, text, text, text[], text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function match_memories(vector, int, text, text, text, text[], text) from anon, authenticated;
  end if;
end;
$$;
