import { describe, expect, it } from 'vitest';
import { dockerEngine, hostPort } from '../src/docker/engine.js';

describe('which Docker engine, and where its published ports are', () => {
  it('this machine for no DOCKER_HOST or a socket; the named host for tcp, http(s) and ssh engines', () => {
    expect(dockerEngine({})).toEqual({ remote: false, host: '127.0.0.1' });
    expect(dockerEngine({ DOCKER_HOST: 'unix:///var/run/docker.sock' })).toEqual({
      remote: false,
      host: '127.0.0.1',
    });
    expect(dockerEngine({ DOCKER_HOST: 'tcp://127.0.0.2:2375' })).toEqual({
      remote: true,
      host: '127.0.0.2',
    });
    expect(dockerEngine({ DOCKER_HOST: 'tcp://builder.example:2376' })).toEqual({
      remote: true,
      host: 'builder.example',
    });
    expect(dockerEngine({ DOCKER_HOST: 'ssh://ops@10.1.2.3' })).toEqual({ remote: true, host: '10.1.2.3' });
    expect(dockerEngine({ DOCKER_HOST: 'tcp://[fd00::5]:2375' })).toEqual({ remote: true, host: 'fd00::5' });
    expect(hostPort('fd00::5', 32768)).toBe('[fd00::5]:32768');
    expect(hostPort('127.0.0.2', 32768)).toBe('127.0.0.2:32768');
  });

  it('refuses a DOCKER_HOST it cannot read, saying what it is', () => {
    expect(() => dockerEngine({ DOCKER_HOST: 'not a url' })).toThrow(/not a URL/);
    expect(() => dockerEngine({ DOCKER_HOST: 'ftp://h:1' })).toThrow(/tcp:\/\//);
  });
});
