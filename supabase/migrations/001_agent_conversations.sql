-- Answers-only chat history for UIs: user and assistant text per session, tool calls stripped.
-- The agent's own state lives in the DynamoDB checkpointer; this table is what a chat UI lists and shows.
-- Idempotent: the local stack applies every migration at each boot.

create table if not exists agent_conversations (
  session_id  text primary key,
  user_id     text not null,
  messages    jsonb not null default '[]'::jsonb,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);

create index if not exists agent_conversations_user_recent on agent_conversations (user_id, updated_at desc);

-- Only the service role reaches the table: RLS on, and no policy for anon or authenticated.
alter table agent_conversations enable row level security;

-- Appends one turn in one statement, so concurrent turns never overwrite each other, and a
-- retried turn (same assistant message_id) is not appended twice. A session belongs to the
-- user who created it: another user's append changes nothing and reports 'forbidden'.
create or replace function append_conversation_turn(
  p_session_id text,
  p_user_id    text,
  p_messages   jsonb,
  p_turn_id    text
) returns text
language plpgsql
set search_path = public
as $$
declare
  v_owner text;
begin
  insert into agent_conversations (session_id, user_id)
  values (p_session_id, p_user_id)
  on conflict (session_id) do nothing;

  select user_id into v_owner from agent_conversations where session_id = p_session_id for update;
  if v_owner is distinct from p_user_id then
    return 'forbidden';
  end if;

  update agent_conversations
     set messages = messages || p_messages,
         updated_at = now()
   where session_id = p_session_id
     and not (messages @> jsonb_build_array(jsonb_build_object('message_id', p_turn_id)));
  return case when found then 'appended' else 'duplicate' end;
end;
$$;

revoke all on function append_conversation_turn(text, text, jsonb, text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function append_conversation_turn(text, text, jsonb, text) from anon, authenticated;
  end if;
end;
$$;
