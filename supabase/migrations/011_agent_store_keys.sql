-- The Agent Server API's store over the memories (graph/agent-server/store.ts), answered in the
-- database instead of from a window of the newest memories: an item is a current memory of the
-- user's, keyed by the client's key (metadata.store_key) or, for one the agent saved, its id.
-- Idempotent: the local stack applies every migration at each boot.

-- The user's current memories in one namespace (p_any_project: in all of them), newest first:
-- with p_key, the item under that key; with p_filter, those whose {content, category, tags}
-- equal each of its entries (an unknown entry matches nothing).
create or replace function agent_store_items(
  p_user_id     text,
  p_project_id  text,
  p_any_project boolean,
  p_key         text,
  p_filter      jsonb,
  p_limit       int,
  p_offset      int
) returns table (id uuid, user_id text, project_id text, content text, category text, tags text[],
                 metadata jsonb, created_at timestamptz, updated_at timestamptz, superseded_by uuid)
language sql
stable
set search_path = public
as $$
  select m.id, m.user_id, m.project_id, m.content, m.category, m.tags, m.metadata, m.created_at,
         m.updated_at, m.superseded_by
    from agent_memories m
   where m.user_id = p_user_id
     and m.superseded_by is null
     and (p_any_project or m.project_id is not distinct from p_project_id)
     and (p_key is null or coalesce(m.metadata->>'store_key', m.id::text) = p_key)
     and (p_filter is null or not exists (
           select 1 from jsonb_each(p_filter) f
            where f.value is distinct from
                  jsonb_build_object('content', m.content, 'category', m.category, 'tags', to_jsonb(m.tags)) -> f.key))
   order by m.created_at desc, m.id
   limit least(greatest(p_limit, 1), 1000)
  offset greatest(p_offset, 0);
$$;

-- The projects the user's current memories are in (null: those in none): the store's namespaces.
-- One array rather than a one-column table: Postgres makes a one-column `returns table` a set of
-- scalars, whose JSON shape PostgREST and a SQL client would read differently.
drop function if exists agent_store_projects(text);
create function agent_store_projects(p_user_id text) returns text[]
language sql
stable
set search_path = public
as $$
  select coalesce(array_agg(p order by p nulls first), '{}')
    from (select distinct m.project_id as p from agent_memories m
           where m.user_id = p_user_id and m.superseded_by is null) projects;
$$;

revoke all on function agent_store_items(text, text, boolean, text, jsonb, int, int) from public;
revoke all on function agent_store_projects(text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function agent_store_items(text, text, boolean, text, jsonb, int, int) from anon, authenticated;
    revoke all on function agent_store_projects(text) from anon, authenticated;
  end if;
end;
$$;
