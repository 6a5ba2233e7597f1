import type { Topology } from '../types.js';
import { etcdRecipe } from './etcd.js';
import type { LocalRecipe } from './recipe.js';
import { redisRecipe } from './redis.js';
import { redisClusterRecipe, redisSentinelRecipe } from './redis-replicated.js';
import { zookeeperRecipe } from './zookeeper.js';

export const RECIPES: Readonly<Record<Topology, LocalRecipe>> = {
  redis: redisRecipe,
  'redis-independent': redisRecipe,
  'redis-sentinel': redisSentinelRecipe,
  'redis-cluster': redisClusterRecipe,
  etcd: etcdRecipe,
  zookeeper: zookeeperRecipe,
};
