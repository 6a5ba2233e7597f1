import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('mutants');
