-- A user's data (docs/user-data.md): the export, the erasure, and the tombstones that keep an
-- erased session's memories from coming back through an extraction message still in flight.
-- Idempotent: the local stack applies every migration at each boot.

-- Sessions erased with their user, by a hash of their id only: the id itself is erased too, and a
-- session id is a random UUID never used again, so the hash names nobody.
create table if not exists erased_sessions (
  session_hash text primary key,
  erased_at    timestamptz not null default now()
);
alter table erased_sessions enable row level security;

create or replace function erased_session_hash(p_session_id text) returns text
language sql
immutable
set search_path = public
as $$ select encode(sha256(convert_to(p_session_id, 'UTF8')), 'hex') $$;

-- The one lock a user's erasure and every write of that user's memories take: a memory written
-- while the erasure runs is either removed by it or refused after it, never left behind.
create or replace function lock_user_data(p_user_id text, p_exclusive boolean) returns void
language plpgsql
set search_path = public
as $$
begin
  if p_exclusive then
    perform pg_advisory_xact_lock(hashtextextended('user-data:' || p_user_id, 0));
  else
    perform pg_advisory_xact_lock_shared(hashtextextended('user-data:' || p_user_id, 0));
  end if;
end;
$$;

-- No memory is stored from an erased session (an extraction message delivered after the
-- erasure): refused with SQLSTATE P0410, which the extraction consumer reads as "erased, drop it".
create or replace function agent_memories_not_erased() returns trigger
language plpgsql
set search_path = public
as $$
begin
  if new.user_id is not null then
    perform lock_user_data(new.user_id, false);
  end if;
  if new.source_session_id is not null
     and exists (select 1 from erased_sessions e where e.session_hash = erased_session_hash(new.source_session_id)) then
    raise exception 'session erased' using errcode = 'P0410';
  end if;
  return new;
end;
$$;
drop trigger if exists agent_memories_not_erased on agent_memories;
create trigger agent_memories_not_erased before insert on agent_memories
  for each row execute function agent_memories_not_erased();

-- Whether a session was erased with its user (the extraction consumer asks before any model call).
create or replace function session_erased(p_session_id text) returns boolean
language sql
stable
set search_path = public
as $$ select exists (select 1 from erased_sessions e where e.session_hash = erased_session_hash(p_session_id)) $$;

-- Everything the database holds about a user goes, in one transaction: transcripts, session rows,
-- traces, memories (superseded ones too) and user context; the user's sessions (those named, and
-- every one the tables know) are tombstoned first. Answers what was removed.
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

-- Everything the database holds about a user, as one JSON document: sessions with their
-- messages, traces, memories with their history (superseded ones and what replaced them), and
-- the user context.
create or replace function export_user_data(p_user_id text) returns jsonb
language sql
stable
set search_path = public
as $$
  select jsonb_build_object(
    'sessions', coalesce((
      select jsonb_agg(jsonb_build_object(
               'session_id', c.session_id,
               'project_id', s.project_id,
               'name', s.name,
               'created_at', c.created_at,
               'updated_at', c.updated_at,
               'messages', c.messages,
               'traces', coalesce((select jsonb_object_agg(t.message_id, t.steps) from execution_traces t
                                    where t.session_id = c.session_id and t.user_id = p_user_id), '{}'::jsonb))
             order by c.created_at, c.session_id)
        from agent_conversations c
        left join agent_sessions s on s.session_id = c.session_id and s.user_id = p_user_id
       where c.user_id = p_user_id), '[]'::jsonb),
    'memories', coalesce((
      select jsonb_agg(jsonb_build_object(
               'id', m.id,
               'project_id', m.project_id,
               'content', m.content,
               'category', m.category,
               'tags', m.tags,
               'metadata', m.metadata,
               'source_session_id', m.source_session_id,
               'created_at', m.created_at,
               'updated_at', m.updated_at,
               'superseded_by', m.superseded_by)
             order by m.created_at, m.id)
        from agent_memories m
       where m.user_id = p_user_id), '[]'::jsonb),
    'user_context', (select jsonb_build_object('plan', u.plan, 'usage', u.usage, 'preferences', u.preferences,
                                               'updated_at', u.updated_at)
                       from user_context u where u.user_id = p_user_id)
  )
$$;

-- Sessions idle since before p_before, oldest first (retention: graph/chat/retention.ts), with
-- their owners: the one deletion then runs on each.
create or replace function idle_sessions(p_before timestamptz, p_limit int)
returns table (session_id text, user_id text, updated_at timestamptz)
language sql
stable
set search_path = public
as $$
  select s.session_id, s.user_id, s.updated_at from agent_sessions s
   where s.updated_at < p_before
   order by s.updated_at, s.session_id
   limit greatest(1, least(p_limit, 1000))
$$;

do $$
declare f text;
begin
  foreach f in array array['erased_session_hash(text)', 'lock_user_data(text, boolean)',
                           'agent_memories_not_erased()', 'session_erased(text)',
                           'erase_user_data(text, text[])', 'export_user_data(text)',
                           'idle_sessions(timestamptz, int)'] loop
    execute format('revoke all on function %s from public', f);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon, authenticated', f);
    end if;
  end loop;
end;
$$;
