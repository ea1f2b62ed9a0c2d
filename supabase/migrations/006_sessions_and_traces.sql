-- Sessions for chat UIs (named, listed newest first) and execution traces per assistant message.
-- Idempotent: the local stack applies every migration at each boot.

create table if not exists agent_sessions (
  session_id    text primary key,
  user_id       text not null,
  project_id    text,
  name          text not null,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  message_count int not null default 0
);
create index if not exists agent_sessions_user_recent on agent_sessions (user_id, updated_at desc, session_id desc);
alter table agent_sessions enable row level security;

create table if not exists execution_traces (
  message_id  text primary key,     -- the assistant message the trace explains
  session_id  text not null,
  user_id     text not null,
  steps       jsonb not null,
  created_at  timestamptz not null default now()
);
create index if not exists execution_traces_session on execution_traces (session_id);
alter table execution_traces enable row level security;

-- One turn, in one transaction: the answers-only messages, the session row (created with its
-- name on the first turn), and the trace. A retried turn (same p_turn_id) changes nothing;
-- another user's session changes nothing and reports 'forbidden'.
drop function if exists append_conversation_turn(text, text, jsonb, text);
create or replace function record_turn(
  p_session_id   text,
  p_user_id      text,
  p_project_id   text,
  p_session_name text,
  p_messages     jsonb,
  p_turn_id      text,
  p_trace        jsonb
) returns text
language plpgsql
set search_path = public
as $$
declare
  v_owner text;
begin
  insert into agent_conversations (session_id, user_id) values (p_session_id, p_user_id)
  on conflict (session_id) do nothing;
  select user_id into v_owner from agent_conversations where session_id = p_session_id for update;
  if v_owner is distinct from p_user_id then
    return 'forbidden';
  end if;

  update agent_conversations
     set messages = messages || p_messages, updated_at = now()
   where session_id = p_session_id
     and not (messages @> jsonb_build_array(jsonb_build_object('message_id', p_turn_id)));
  if not found then
    return 'duplicate';
  end if;

  insert into agent_sessions (session_id, user_id, project_id, name, message_count)
  values (p_session_id, p_user_id, p_project_id, coalesce(nullif(btrim(p_session_name), ''), 'New chat'), jsonb_array_length(p_messages))
  on conflict (session_id) do update
    set message_count = agent_sessions.message_count + jsonb_array_length(p_messages), updated_at = now();

  if p_trace is not null then
    insert into execution_traces (message_id, session_id, user_id, steps)
    values (p_turn_id, p_session_id, p_user_id, p_trace)
    on conflict (message_id) do nothing;
  end if;
  return 'appended';
end;
$$;

-- Removes a session's conversation, traces and row, for its owner only. True when it existed.
create or replace function delete_session(p_session_id text, p_user_id text) returns boolean
language plpgsql
set search_path = public
as $$
begin
  if not exists (select 1 from agent_conversations where session_id = p_session_id and user_id = p_user_id) then
    return false;
  end if;
  delete from execution_traces where session_id = p_session_id;
  delete from agent_sessions where session_id = p_session_id;
  delete from agent_conversations where session_id = p_session_id;
  return true;
end;
$$;

-- A page of the user's sessions, most recently active first, after the keyset cursor
-- (updated_at at millisecond precision, session_id), so pages stay stable while sessions change.
create or replace function list_sessions(
  p_user_id text,
  p_limit int,
  p_after_updated_at timestamptz default null,
  p_after_session_id text default null
) returns table (session_id text, project_id text, name text, created_at timestamptz, updated_at timestamptz, message_count int)
language sql
stable
set search_path = public
as $$
  select s.session_id, s.project_id, s.name, s.created_at, date_trunc('milliseconds', s.updated_at), s.message_count
    from agent_sessions s
   where s.user_id = p_user_id
     and (p_after_updated_at is null
          or (date_trunc('milliseconds', s.updated_at), s.session_id) < (p_after_updated_at, p_after_session_id))
   order by date_trunc('milliseconds', s.updated_at) desc, s.session_id desc
   limit least(greatest(p_limit, 1), 100);
$$;

revoke all on function list_sessions(text, int, timestamptz, text) from public;
revoke all on function record_turn(text, text, text, text, jsonb, text, jsonb) from public;
revoke all on function delete_session(text, text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function record_turn(text, text, text, text, jsonb, text, jsonb) from anon, authenticated;
    revoke all on function delete_session(text, text) from anon, authenticated;
    revoke all on function list_sessions(text, int, timestamptz, text) from anon, authenticated;
  end if;
end;
$$;
