-- A memory remembers when it was said (stated_at: when its turn began, which the extraction message
-- carries as turn_at), so reconciliation keeps the later statement current whichever turn's
-- extraction lands first: a message can arrive late, or be redelivered after a later turn's. A
-- memory stored before this, or without a turn time (the store_memory tool's), has none, and counts
-- as said before any that has one; a new one without a time supersedes as before.
-- Idempotent: the local stack applies every migration at each boot. create or replace keeps each
-- function's grants (014 and 007 set them).

alter table agent_memories add column if not exists stated_at timestamptz;

-- As 014's, and the memory keeps its statement time: a fact said again keeps the later of the two.
create or replace function insert_memory(
  p_user_id           text,
  p_project_id        text,
  p_content           text,
  p_embedding         vector(1024),
  p_category          text default null,
  p_tags              text[] default '{}',
  p_metadata          jsonb default '{}'::jsonb,
  p_source_session_id text default null,
  p_turn_at           timestamptz default null
) returns table (id uuid, created boolean)
language plpgsql
set search_path = public, extensions
as $$
begin
  -- For the trigger (agent_memories_not_erased), in this transaction only.
  perform set_config('agent.memory_turn_at', coalesce(p_turn_at::text, ''), true);
  return query
    insert into agent_memories as m (user_id, project_id, content, embedding, category, tags, metadata, source_session_id, stated_at)
    values (p_user_id, p_project_id, btrim(p_content), p_embedding, p_category, coalesce(p_tags, '{}'), coalesce(p_metadata, '{}'::jsonb), p_source_session_id, p_turn_at)
    on conflict (user_id, project_id, content_hash) do update
      set superseded_by = null, updated_at = now(), stated_at = greatest(m.stated_at, excluded.stated_at)
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

-- As 007's (same user, same project), and by statement time: of the old memories, one said after
-- the new one (an earlier turn's extraction that arrived late) stays current and the new one is kept
-- as replaced by it; the others are replaced by whichever is current. Counts the old ones replaced.
create or replace function supersede_memories(
  p_user_id text,
  p_old_ids uuid[],
  p_new_id  uuid
) returns int
language plpgsql
set search_path = public
as $$
declare
  v_project text;
  v_stated  timestamptz;
  v_newer   uuid;
  v_count   int;
begin
  select n.project_id, n.stated_at into v_project, v_stated
    from agent_memories n where n.id = p_new_id and n.user_id = p_user_id;
  if not found then
    return 0;
  end if;
  if v_stated is not null then
    select m.id into v_newer from agent_memories m
     where m.id = any(p_old_ids) and m.id <> p_new_id
       and m.user_id = p_user_id and m.project_id is not distinct from v_project
       and m.superseded_by is null and m.stated_at > v_stated
     order by m.stated_at desc
     limit 1;
  end if;
  if v_newer is not null then
    update agent_memories set superseded_by = v_newer, updated_at = now()
     where id = p_new_id and superseded_by is null;
  end if;
  with changed as (
    update agent_memories m
       set superseded_by = coalesce(v_newer, p_new_id), updated_at = now()
     where m.id = any(p_old_ids) and m.id <> p_new_id and m.id is distinct from v_newer
       and m.user_id = p_user_id and m.project_id is not distinct from v_project
       and m.superseded_by is null
       and (v_stated is null or m.stated_at is null or m.stated_at <= v_stated)
    returning 1
  )
  select count(*)::int into v_count from changed;
  return v_count;
end;
$$;
