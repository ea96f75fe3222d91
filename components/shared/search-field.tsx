import type { ComponentProps } from 'react';
import controls from './controls.module.css';

type SearchFieldProps = Omit<ComponentProps<'input'>, 'type' | 'className' | 'aria-label' | 'value' | 'onChange'> & {
  /** The accessible name: the box is a `searchbox` with no visible label. */
  label: string;
  value: string;
  onValue: (value: string) => void;
};

/**
 * The search box of the inbox's top bar, a conversation's search and the sandbox's client list: a
 * controlled `type="search"` field in the shared field style (a page sizes it from its container).
 */
export function SearchField({ label, value, onValue, placeholder, ...rest }: SearchFieldProps) {
  return (
    <input
      {...rest}
      className={controls.field}
      type="search"
      aria-label={label}
      placeholder={placeholder}
      value={value}
      onChange={(e) => onValue(e.target.value)}
    />
  );
}
