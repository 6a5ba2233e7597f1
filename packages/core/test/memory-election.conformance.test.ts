import { MemoryElection, MemoryElectionHub } from '@fencekit/core';
import { describeElectionConformance } from '@fencekit/core/testing';

const hub = new MemoryElectionHub();

describeElectionConformance('memory', {
  createElection: async (name) => new MemoryElection(name, hub),
  // One process has no session to lose: the participant going away (close) is the nearest thing, and
  // it must end the leadership and hand over just as a lost session does.
  loseSession: (participant) => participant.close(),
});
