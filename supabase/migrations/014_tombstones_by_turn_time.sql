-- A tombstone (012_user_data.sql) refuses the memories of turns made before its erasure, not of
-- every turn for good: a client may choose its thread ids (POST /threads with thread_id), and a
-- thread made again under an erased id after the erasure is new data, whose memories are kept. A
-- memory names the time its turn began (insert_memory's p_turn_at; the extraction message carries
-- it); one that names none is refused as before. The clocks of the function that ran the turn and of
-- the database may differ: a turn begun up to 5 s after the erasure still counts as before it.
-- Idempotent: the local stack applies every migration at each boot (012 then re-creates the old
-- signatures, which this drops again).

drop function if exists insert_memory(text, text, text, vector, text, text[], jsonb, text);
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

-- Whether a turn of the session begun at p_turn_at (none: any turn) was erased with its user.
create or replace function session_erased_before(p_session_id text, p_turn_at timestamptz) returns boolean
language sql
stable
set search_path = public
as $$
  select exists (
    select 1 from erased_sessions e
     where e.session_hash = erased_session_hash(p_session_id)
       and (p_turn_at is null or p_turn_at < e.erased_at + interval '5 seconds'))
$$;

drop function if exists session_erased(text);
create or replace function session_erased(p_session_id text, p_turn_at timestamptz default null) returns boolean
language sql
stable
set search_path = public
as $$ select session_erased_before(p_session_id, p_turn_at) $$;

create or replace function agent_memories_not_erased() returns trigger
language plpgsql
set search_path = public
as $$
begin
  if new.user_id is not null then
    perform lock_user_data(new.user_id, false);
  end if;
  if new.source_session_id is not null
     and session_erased_before(new.source_session_id,
                               nullif(current_setting('agent.memory_turn_at', true), '')::timestamptz) then
    raise exception 'session erased' using errcode = 'P0410';
  end if;
  return new;
end;
$$;

-- An erasure's passes each tombstone the user's sessions (erase_user_data), and a session is erased
-- as of the last: a turn made on a session after the first pass and before the erasure reached it
-- (it deletes sessions one at a time, under their leases) is a turn of the erased session. The
-- tombstone's time moves forward with each pass, here rather than in erase_user_data's
-- `on conflict do nothing`, which a BEFORE INSERT trigger runs ahead of.
create or replace function erased_sessions_refresh() returns trigger
language plpgsql
set search_path = public
as $$
begin
  update erased_sessions set erased_at = greatest(erased_at, now()) where session_hash = new.session_hash;
  return new;
end;
$$;
drop trigger if exists erased_sessions_refresh on erased_sessions;
create trigger erased_sessions_refresh before insert on erased_sessions
  for each row execute function erased_sessions_refresh();

do $$
declare f text;
begin
  foreach f in array array['insert_memory(text, text, text, vector, text, text[], jsonb, text, timestamptz)',
                           'session_erased_before(text, timestamptz)', 'session_erased(text, timestamptz)',
                           'erased_sessions_refresh()'] loop
    execute format('revoke all on function %s from public', f);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon, authenticated', f);
    end if;
  end loop;
end;
$$;
