import { CommandDeadlines } from '@fencekit/redis/internal';
import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';

// Commands built here are never sent: the deadline alone decides how they end.
describe('CommandDeadlines', () => {
  it('fails a command still unanswered at its deadline, as ioredis commandTimeout does', async () => {
    const deadlines = new CommandDeadlines(30);
    const command = new Command('get', ['k']);
    const startedAt = performance.now();
    deadlines.watch(command);
    await expect(command.promise).rejects.toThrow('Command timed out');
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(25);
    deadlines.close();
  });

  it('leaves a settled command alone and still bounds the ones sent after it', async () => {
    const deadlines = new CommandDeadlines(40);
    const answered = new Command('get', ['a']);
    deadlines.watch(answered);
    answered.resolve('value');
    deadlines.settled(answered);
    await new Promise((resolve) => setTimeout(resolve, 25));
    // Sent 25 ms after the first: the one timer, armed for the first, must re-arm for this one.
    const late = new Command('get', ['b']);
    const sentAt = performance.now();
    deadlines.watch(late);
    await expect(answered.promise).resolves.toBe('value');
    await expect(late.promise).rejects.toThrow('Command timed out');
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(35);
    deadlines.close();
  });

  it('close() stops the timer: nothing is left to fire', async () => {
    const deadlines = new CommandDeadlines(20);
    const command = new Command('get', ['k']);
    deadlines.watch(command);
    deadlines.close();
    const outcome = await Promise.race([
      command.promise.then(
        () => 'resolved',
        () => 'rejected',
      ),
      new Promise((resolve) => setTimeout(() => resolve('untouched'), 60)),
    ]);
    expect(outcome).toBe('untouched');
  });
});
