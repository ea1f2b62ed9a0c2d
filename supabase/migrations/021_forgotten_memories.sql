-- A memory the user deleted is not stored again by a turn from before the deletion: its own turn's
-- extraction message still in flight, a redelivery of it, or the remember tool of a turn still
-- running. Before, delete_memory left nothing behind, and that extraction put the memory back after
-- DELETE /api/memories/{id} had answered. A turn after the deletion that says it again is new data,
-- and is stored; so is a store put, which names no turn.
--
-- The mark is the deleted memory's content hash and embedding, the session and turn that stated it,
-- by user and project. It holds no text, but it is derived from it: a short fact (a PIN) can be found
-- again from its md5 by guessing, and an embedding can be partly inverted; it goes with the user's
-- erasure, and after 14 days. A fact of a turn begun more than 14 days ago is refused outright: no
-- mark that could match it is kept (a message can wait that long and more: a dead-letter redrive
-- starts its retention again). Idempotent: the local stack applies every migration at each boot.

create table if not exists forgotten_memories (
  user_id      text not null,
  project_id   text,
  content_hash text not null,
  embedding    vector(1024) not null,
  forgotten_at timestamptz not null default now()
);
alter table forgotten_memories add column if not exists source_session_id text;
alter table forgotten_memories add column if not exists stated_at timestamptz;
create index if not exists forgotten_memories_by_user on forgotten_memories (user_id, forgotten_at);
create index if not exists forgotten_memories_by_time on forgotten_memories (forgotten_at);
alter table forgotten_memories enable row level security;

-- Exclusive under the user's lock (012), as the erasure: a memory written at the same moment is
-- either deleted here or, once this commits, refused by the trigger below, never left behind. The
-- mark is timed once the lock is held. Expired marks (anyone's) go a few at a time, skipping rows
-- another deletion is removing.
create or replace function delete_memory(p_user_id text, p_id uuid) returns boolean
language plpgsql
set search_path = public
as $$
begin
  perform lock_user_data(p_user_id, true);
  delete from forgotten_memories where ctid in (
    select ctid from forgotten_memories where forgotten_at < now() - interval '14 days'
     limit 500 for update skip locked);
  with gone as (
    delete from agent_memories m where m.id = p_id and m.user_id = p_user_id
    returning m.user_id, m.project_id, m.content_hash, m.embedding, m.source_session_id,
              coalesce(m.stated_at, m.created_at) as stated_at
  )
  insert into forgotten_memories (user_id, project_id, content_hash, embedding, source_session_id, stated_at, forgotten_at)
    select g.*, clock_timestamp() from gone g;
  return found;
end;
$$;

-- As 016's, with p_same_similarity: a fact of a turn begun before a memory of the user was deleted
-- where the fact would be seen (the same project, or either in none: those are every project's; so
-- a fact with no project is refused for a memory deleted in one, though other projects lose it too)
-- is that memory when it has its words, or, from the very turn that stated it, when its cosine
-- similarity to it is at least p_same_similarity (the extraction passes its duplicate threshold;
-- null: words only). Another turn's fact that is only near it is kept: it may be a correction
-- (reconcile supersedes by subject). Such a fact is not stored (the trigger below skips it): it
-- answers the memory of its words if one was stored again since, else (null, false).
drop function if exists insert_memory(text, text, text, vector, text, text[], jsonb, text, timestamptz);
create or replace function insert_memory(
  p_user_id           text,
  p_project_id        text,
  p_content           text,
  p_embedding         vector(1024),
  p_category          text default null,
  p_tags              text[] default '{}',
  p_metadata          jsonb default '{}'::jsonb,
  p_source_session_id text default null,
  p_turn_at           timestamptz default null,
  p_same_similarity   real default null
) returns table (id uuid, created boolean)
language plpgsql
set search_path = public, extensions
as $$
begin
  -- For the trigger (agent_memories_not_erased), in this transaction only.
  perform set_config('agent.memory_turn_at', coalesce(p_turn_at::text, ''), true);
  perform set_config('agent.memory_same_similarity', coalesce(p_same_similarity::text, ''), true);
  return query
    insert into agent_memories as m (user_id, project_id, content, embedding, category, tags, metadata, source_session_id, stated_at)
    values (p_user_id, p_project_id, btrim(p_content), p_embedding, p_category, coalesce(p_tags, '{}'), coalesce(p_metadata, '{}'::jsonb), p_source_session_id, p_turn_at)
    on conflict (user_id, project_id, content_hash) do update
      set superseded_by = null,
          updated_at = now(),
          stated_at = greatest(coalesce(m.stated_at, m.created_at), coalesce(excluded.stated_at, now()))
    returning m.id, (m.xmax = 0);
  if not found then
    return query
      select m.id, false from agent_memories m
       where m.user_id is not distinct from p_user_id
         and m.project_id is not distinct from p_project_id
         and m.content_hash = md5(lower(regexp_replace(btrim(p_content), '\s+', ' ', 'g')))
         and m.superseded_by is null;
    if not found then
      return query select null::uuid, false;
    end if;
  end if;
end;
$$;

-- As 014's, and a memory forgotten since its turn began is skipped (the row is not inserted), as is
-- any fact of a turn older than the marks last. Within 5 s for the clocks of the function and the
-- database, as 014 allows an erasure's tombstone.
create or replace function agent_memories_not_erased() returns trigger
language plpgsql
set search_path = public, extensions
as $$
declare
  v_turn_at timestamptz := nullif(current_setting('agent.memory_turn_at', true), '')::timestamptz;
  v_same    real := nullif(current_setting('agent.memory_same_similarity', true), '')::real;
begin
  if new.user_id is not null then
    perform lock_user_data(new.user_id, false);
  end if;
  if new.source_session_id is not null and session_erased_before(new.source_session_id, v_turn_at) then
    raise exception 'session erased' using errcode = 'P0410';
  end if;
  if v_turn_at is not null and v_turn_at < now() - interval '14 days' then
    return null;
  end if;
  -- Generated columns are not computed yet in a BEFORE trigger: the hash is 002's expression.
  if v_turn_at is not null and exists (
       select 1 from forgotten_memories f
        where f.user_id = new.user_id
          and (f.project_id is null or new.project_id is null or f.project_id = new.project_id)
          and v_turn_at < f.forgotten_at + interval '5 seconds'
          and (f.content_hash = md5(lower(regexp_replace(btrim(new.content), '\s+', ' ', 'g')))
               or (v_same is not null
                   and f.source_session_id is not distinct from new.source_session_id
                   and f.stated_at = v_turn_at
                   and 1 - (f.embedding <=> new.embedding) >= v_same))) then
    return null;
  end if;
  return new;
end;
$$;

-- As 012's, and the user's forgotten memories' marks go too.
create or replace function erase_user_data(p_user_id text, p_session_ids text[]) returns jsonb
language plpgsql
set search_path = public
as $$
declare
  v_sessions text[];
  v_counts jsonb;
begin
  perform lock_user_data(p_user_id, true);
  select coalesce(array_agg(distinct s), '{}') into v_sessions from (
    select unnest(coalesce(p_session_ids, '{}')) as s
    union select session_id from agent_sessions where user_id = p_user_id
    union select session_id from agent_conversations where user_id = p_user_id
    union select session_id from execution_traces where user_id = p_user_id
    union select source_session_id from agent_memories where user_id = p_user_id and source_session_id is not null
  ) named where s is not null;
  insert into erased_sessions (session_hash)
    select erased_session_hash(s) from unnest(v_sessions) s
    on conflict (session_hash) do nothing;
  delete from forgotten_memories where user_id = p_user_id;
  with traces as (delete from execution_traces where user_id = p_user_id returning 1),
       sessions as (delete from agent_sessions where user_id = p_user_id returning 1),
       conversations as (delete from agent_conversations where user_id = p_user_id returning 1),
       memories as (delete from agent_memories where user_id = p_user_id returning 1),
       context as (delete from user_context where user_id = p_user_id returning 1)
  select jsonb_build_object(
           'sessions', cardinality(v_sessions),
           'transcripts', (select count(*) from conversations),
           'traces', (select count(*) from traces),
           'memories', (select count(*) from memories),
           'user_context', (select count(*) from context))
    into v_counts;
  return v_counts;
end;
$$;

do $$
declare f text;
begin
  foreach f in array array['delete_memory(text, uuid)',
                           'insert_memory(text, text, text, vector, text, text[], jsonb, text, timestamptz, real)',
                           'agent_memories_not_erased()', 'erase_user_data(text, text[])'] loop
    execute format('revoke all on function %s from public', f);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon, authenticated', f);
    end if;
  end loop;
end;
$$;
