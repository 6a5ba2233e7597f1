import { MemoryElection, MemoryElectionHub } from '@fencekit/core';
import { describeElectionConformance } from '@fencekit/core/testing';

const hub = new MemoryElectionHub();

describeElectionConformance('memory', {
  createElection: async (name) => new MemoryElection(name, hub),
});
