-- Every instance remembers checked keys for up to API_KEY_CACHE_SECONDS. So
-- that a revocation acts at once everywhere, the database announces each
-- change that can make a remembered key invalid (revoked, its expiry moved,
-- e.g. the end of a rotation's overlap, its scopes or hash changed, the row
-- deleted) on the channel api_keys_changed, with the key's id as payload;
-- TRUNCATE announces '*' (forget every key). NOTIFY is delivered when the
-- transaction commits, never for one rolled back. A trigger, not the
-- statements of the CLI, so that a change made by hand in psql is announced
-- too. Recording a key's last use (last_used_at) announces nothing.
-- CREATE TRIGGER takes a SHARE ROW EXCLUSIVE lock on api_keys for
-- milliseconds: key look-ups (reads) go on, writes to keys wait. lock_timeout
-- makes the migration give up rather than queue behind a long transaction.
SET LOCAL lock_timeout = '5s';

CREATE OR REPLACE FUNCTION api_keys_announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('api_keys_changed', '*');
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('api_keys_changed', OLD.id::text);
  ELSIF NEW.revoked_at IS DISTINCT FROM OLD.revoked_at
    OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
    OR NEW.scopes IS DISTINCT FROM OLD.scopes
    OR NEW.key_hash IS DISTINCT FROM OLD.key_hash THEN
    PERFORM pg_notify('api_keys_changed', OLD.id::text);
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS api_keys_announce_change ON api_keys;
CREATE TRIGGER api_keys_announce_change
  AFTER UPDATE OF revoked_at, expires_at, scopes, key_hash OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_announce_change();
DROP TRIGGER IF EXISTS api_keys_announce_truncate ON api_keys;
CREATE TRIGGER api_keys_announce_truncate
  AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_announce_change();
