import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { scratchDir } from './scratchSpace.js';

/** Where CI and the development image install Chromium (scripts/ci-system-deps.sh). */
export const chromiumPath = '/usr/bin/chromium';

/** Flags for a headless Chromium that talks to nothing but the page under test. */
export function chromiumFlags(profile: string): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    // Any request to another host goes to a dead proxy and fails: the page
    // has to work offline to pass.
    '--proxy-server=http://127.0.0.1:9',
  ];
}

// Long enough for a loaded 2-core machine; a page that needs longer is broken.
const waitTimeoutMs = 120_000;
const pollIntervalMs = 50;
const closeTimeoutMs = 30_000;

interface Reply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/**
 * One page of a headless Chromium, driven through the DevTools protocol over
 * --remote-debugging-pipe (fd 3 in, fd 4 out, messages ended by NUL): no
 * WebSocket, which Node 20 lacks, and no browser download.
 */
export class BrowserPage {
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private sessionId: string | undefined;

  private constructor(
    private readonly input: Writable,
    output: Readable,
  ) {
    // A write after Chromium died: the command's promise fails instead (see failPending).
    input.on('error', (error: Error) => {
      this.failPending(error.message);
    });
    let buffered = '';
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\0')) >= 0) {
        const reply = JSON.parse(buffered.slice(0, end)) as Reply;
        buffered = buffered.slice(end + 1);
        if (reply.id !== undefined) this.pending.get(reply.id)?.(reply);
      }
    });
  }

  /** Starts Chromium with a blank page; close() stops it and removes its profile. */
  static async open(): Promise<{ page: BrowserPage; close: () => Promise<void> }> {
    const profile = scratchDir('pets-chromium-');
    const browser = spawn(chromiumPath, [...chromiumFlags(profile.path), '--remote-debugging-pipe', 'about:blank'], {
      stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
    });
    const page = new BrowserPage(browser.stdio[3] as Writable, browser.stdio[4] as Readable);
    const exited = new Promise((resolve) => browser.once('exit', resolve));
    browser.once('exit', (code, signal) => {
      page.failPending(`Chromium exited (${signal ?? code})`);
    });
    const close = async () => {
      // Browser.close ends the renderers too, which SIGKILL would leave writing to the profile.
      const killer = setTimeout(() => browser.kill('SIGKILL'), closeTimeoutMs);
      page.send('Browser.close').catch(() => browser.kill('SIGKILL'));
      await exited;
      clearTimeout(killer);
      profile.remove();
    };
    try {
      const { targetId } = await page.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await page.send('Target.attachToTarget', { targetId, flatten: true });
      page.sessionId = String(sessionId);
    } catch (error) {
      await close();
      throw error;
    }
    return { page, close };
  }

  private failPending(reason: string): void {
    for (const settle of this.pending.values()) settle({ error: { message: reason } });
  }

  /** One DevTools protocol command (on the page once attached). */
  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const message = { id, method, params, ...(this.sessionId ? { sessionId: this.sessionId } : {}) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => {
        this.pending.delete(id);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result ?? {});
      });
      this.input.write(`${JSON.stringify(message)}\0`);
    });
  }

  async navigate(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
  }

  /** The value of a JavaScript expression in the page. */
  async evaluate(expression: string): Promise<unknown> {
    const { result, exceptionDetails } = (await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
    })) as { result?: { value?: unknown }; exceptionDetails?: { text: string } };
    if (exceptionDetails) throw new Error(`in the page: ${exceptionDetails.text} (${expression})`);
    return result?.value;
  }

  /** Evaluates the expression until it is truthy, and returns that value; fails after waitTimeoutMs. */
  async waitFor(expression: string, what: string): Promise<unknown> {
    const deadline = Date.now() + waitTimeoutMs;
    for (;;) {
      const value = await this.evaluate(expression);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`the page never showed ${what} (${expression})`);
      await sleep(pollIntervalMs);
    }
  }

  /** Clicks the first element matching the selector, once there is one. */
  async click(selector: string): Promise<void> {
    const quoted = JSON.stringify(selector);
    await this.waitFor(
      `(() => { const e = document.querySelector(${quoted}); if (!e) return false; e.click(); return true; })()`,
      selector,
    );
  }

  /** Types text into the element matching the selector, as a keyboard would. */
  async type(selector: string, text: string): Promise<void> {
    const quoted = JSON.stringify(selector);
    await this.waitFor(
      `(() => { const e = document.querySelector(${quoted}); if (!e) return false; e.focus(); return document.activeElement === e; })()`,
      selector,
    );
    await this.send('Input.insertText', { text });
  }
}
