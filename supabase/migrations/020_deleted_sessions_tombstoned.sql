-- A deleted session is tombstoned as an erased one is (012, 014): a turn of it whose extraction
-- message is still in flight (or redelivered) stores no memory. Before, the session's rows went and
-- nothing was left to name it: a user who deleted a session and then erased themselves had the
-- session's late memory stored after the erasure had answered, since the erasure could no longer
-- find the session to tombstone. Memories already stored from the session stay, as before: they
-- are the user's, not the session's. The hash names nobody (012). Same signature and grants as 006's.
-- Idempotent: the local stack applies every migration at each boot.

create or replace function delete_session(p_session_id text, p_user_id text) returns boolean
language plpgsql
set search_path = public
as $$
begin
  if not exists (select 1 from agent_conversations where session_id = p_session_id and user_id = p_user_id) then
    return false;
  end if;
  insert into erased_sessions (session_hash) values (erased_session_hash(p_session_id))
    on conflict (session_hash) do nothing;
  delete from execution_traces where session_id = p_session_id;
  delete from agent_sessions where session_id = p_session_id;
  delete from agent_conversations where session_id = p_session_id;
  return true;
end;
$$;
